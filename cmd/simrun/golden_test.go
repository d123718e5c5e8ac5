package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// goldenFiles are the cache files whose inspect --map and diff outputs are
// checked in (testdata/golden): files the spec builders lay out as the
// writers do, and a file the real cache wrote through a kernel switch with
// compaction off, so stale data and a superseded index are present.
func goldenFiles(t *testing.T) map[string][]byte {
	t.Helper()
	ws := spectest.Weights(3, 5000, 1)
	v2, _ := spectest.BuildV2(4096, ws)
	one := spectest.NewV3(4096)
	one.Save(ws)
	two := spectest.NewV3(4096)
	two.Save(ws)
	two.Save(spectest.Weights(2, 700, 2))

	switched := func(format spec.Format) []byte {
		path := filepath.Join(t.TempDir(), "switch.cache")
		opts := cache.Options{Path: path, Format: format, CompactGarbageRatio: -1}
		for _, seed := range []uint32{1, 2} {
			c, err := cache.Open(opts)
			require.NoError(t, err)
			require.NoError(t, c.InitializeForProgram("P"))
			for _, w := range spectest.Weights(3, 3000, seed) {
				k := w.Key
				k.Seed = seed // a kernel switch: same names, another layout
				if _, hit := c.LookUp(k); hit {
					continue
				}
				buf, err := c.ReserveSpace(len(w.Data))
				require.NoError(t, err)
				copy(buf, w.Data)
				_, err = c.LookUpOrInsert(k, buf)
				require.NoError(t, err)
			}
			require.NoError(t, c.Finalize())
			require.NoError(t, c.Close())
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return b
	}
	return map[string][]byte{"v2": v2, "v3-one-save": one.File, "v3-two-saves": two.File,
		"v3-kernel-switch": switched(spec.FormatV3), "v2-kernel-switch": switched(spec.FormatV2)}
}

// specTestdata holds the golden cache files: the builders' files, compared
// with the builders' output, and files the real cache wrote, kept as written
// (their copy identities are random, so a new run writes other bytes).
const specTestdata = "../../spec/testdata"

// TestGoldenMapAndDiff: inspect --map of each file in spec/testdata and diff
// of the pairs that tell a story, compared with testdata/golden (regenerate
// files and outputs with go test ./cmd/simrun -run GoldenMapAndDiff -update).
func TestGoldenMapAndDiff(t *testing.T) {
	made := goldenFiles(t)
	files := map[string][]byte{}
	paths := map[string]string{}
	for name, b := range made {
		paths[name] = filepath.Join(specTestdata, name+".cache")
		if *updateGolden {
			require.NoError(t, os.WriteFile(paths[name], b, 0o644))
		}
		got, err := os.ReadFile(paths[name])
		require.NoError(t, err, "regenerate with: go test ./cmd/simrun -run GoldenMapAndDiff -update")
		if !strings.Contains(name, "kernel-switch") {
			require.Equal(t, b, got, "%s: the builders write other bytes now; -update", paths[name])
		}
		files[name] = got
	}
	outputs := map[string]string{}
	for name, b := range files {
		rep, err := inspect(bytes.NewReader(b), int64(len(b)), name+".cache", spec.Parser{})
		require.NoError(t, err)
		require.True(t, rep.Valid, name)
		var out bytes.Buffer
		require.NoError(t, printInspect(&out, rep))
		outputs[name+".inspect-map.txt"] = out.String()
	}
	for _, pair := range [][2]string{{"v3-one-save", "v3-two-saves"}, {"v2", "v3-one-save"}} {
		a, err := loadEntries(paths[pair[0]])
		require.NoError(t, err)
		b, err := loadEntries(paths[pair[1]])
		require.NoError(t, err)
		rep := diffFiles(a, b)
		rep.A, rep.B = pair[0]+".cache", pair[1]+".cache"
		var out bytes.Buffer
		printDiff(&out, rep)
		outputs["diff-"+pair[0]+"-"+pair[1]+".txt"] = out.String()
	}
	for name, got := range outputs {
		golden := filepath.Join("testdata", "golden", name)
		if *updateGolden {
			require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
			require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			continue
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err, "regenerate with: go test ./cmd/simrun -run GoldenMapAndDiff -update")
		require.Equal(t, string(want), got, name)
	}
}
