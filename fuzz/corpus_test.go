package fuzz

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteSeedCorpus regenerates testdata/fuzz/<Target>/seed-* from the
// seed builders when XPWC_WRITE_CORPUS=1, so the committed corpus follows
// format changes. Without the variable it checks that every seed file is
// present and up to date.
func TestWriteSeedCorpus(t *testing.T) {
	sets := map[string][][]byte{
		"FuzzParseV2":        v2Seeds(),
		"FuzzParseV3":        v3Seeds(),
		"FuzzV3Mutated":      v3Seeds(),
		"FuzzRoundTrip":      append(v2Seeds()[:2:2], v3Seeds()[0]),
		"FuzzSparseDeclared": sparseSeeds(),
	}
	write := os.Getenv("XPWC_WRITE_CORPUS") == "1"
	for target, seeds := range sets {
		dir := filepath.Join("testdata", "fuzz", target)
		for i, s := range seeds {
			path := filepath.Join(dir, fmt.Sprintf("seed-%02d", i))
			want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
			if write {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (regenerate with XPWC_WRITE_CORPUS=1)", err)
			}
			if string(got) != want {
				t.Fatalf("%s is stale (regenerate with XPWC_WRITE_CORPUS=1)", path)
			}
		}
	}
}
