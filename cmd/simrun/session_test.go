package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sessionTimes matches the parts of the text output that change from run to
// run: times.
var sessionTimes = regexp.MustCompile(`[0-9]+\.[0-9]+ ms`)

// indexCRC matches the CRC of an index block in inspect's text output. The
// cache draws copy identities at random (spec.Entry.CopyID), so the index of
// a file it wrote differs from run to run in them and in its CRC.
var indexCRC = regexp.MustCompile(`(?m)^(index: .*, crc )0x[0-9a-f]{8}$`)

func maskIndexCRC(text string) string { return indexCRC.ReplaceAllString(text, "${1}0x…") }

// TestSessionDoc runs the session shown in docs/simrun.md and checks that
// the page shows its output (go test ./cmd/simrun -run SessionDoc -update
// rewrites it).
func TestSessionDoc(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo.cache")
	before := filepath.Join(dir, "before.cache")
	steps := [][]string{
		{"launch", "--cache", demo},
		{"launch", "--cache", demo},
		{"cp", demo, before},
		{"launch", "--cache", demo, "--kernel", "f32-goi-nr8"},
		{"inspect", demo, "--map"},
		{"diff", before, demo},
	}
	var b strings.Builder
	b.WriteString("```\n")
	for _, args := range steps {
		shown := strings.ReplaceAll(strings.Join(args, " "), dir+"/", "")
		if args[0] == "cp" {
			data, err := os.ReadFile(args[1])
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(args[2], data, 0o600))
			b.WriteString("$ " + shown + "\n")
			continue
		}
		var out, errOut bytes.Buffer
		code := run(&env{stdout: &out, stderr: &errOut}, args)
		require.Contains(t, []int{exitOK, exitProblem}, code, "%v: %s", args, errOut.String())
		text := strings.ReplaceAll(out.String(), dir+"/", "")
		text = maskIndexCRC(sessionTimes.ReplaceAllString(text, "… ms"))
		b.WriteString("$ simrun " + shown + "\n" + text)
		if code != exitOK {
			b.WriteString("(exit 1)\n")
		}
	}
	b.WriteString("```\n")
	got := b.String()

	const doc = "../../docs/simrun.md"
	page, err := os.ReadFile(doc)
	require.NoError(t, err)
	begin, end := "<!-- session:begin -->\n", "<!-- session:end -->"
	i, j := bytes.Index(page, []byte(begin)), bytes.Index(page, []byte(end))
	require.True(t, i >= 0 && j > i, "docs/simrun.md lost its session markers")
	if *updateGolden {
		updated := string(page[:i+len(begin)]) + got + string(page[j:])
		require.NoError(t, os.WriteFile(doc, []byte(updated), 0o644))
		return
	}
	require.Equal(t, got, string(page[i+len(begin):j]), "regenerate with: go test ./cmd/simrun -run SessionDoc -update")
}
