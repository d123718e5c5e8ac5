package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRandomReferenceAgrees(t *testing.T) {
	code, out, errs := runCmd(t, "random", "--seed", "3", "--runs", "5", "--steps", "40", "--out", t.TempDir())
	require.Equal(t, exitOK, code, out+errs)
	assert.Contains(t, out, "5 runs x 40 steps from seed 3")
	assert.Contains(t, out, "0 failed")
}

// A design variant fails on its invariant violations; the failure is shrunk
// and written as a scenario that replays (and still shows the violation).
func TestRandomVariantShrinksToScenario(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCmd(t, "random", "--design", "borrowed-options", "--runs", "30", "--steps", "30", "--out", dir)
	require.Equal(t, exitProblem, code, out+errs)
	files, err := filepath.Glob(filepath.Join(dir, "*.scenario"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	text := string(b)
	assert.True(t, strings.HasPrefix(text, "# Found by simrun random"))
	assert.Contains(t, text, "violates I9-options-owned")
	// Shrunk far below the 30 generated ops (the signature keeps the
	// failing step's exact results, so a few ops leading to them stay).
	assert.Contains(t, text, "clobber-options proc=")
	assert.LessOrEqual(t, strings.Count(text, "\n----\n")-3, 8, text) // minus design, bounds, file
	code, out, _ = runCmd(t, "replay", files[0])
	assert.Equal(t, exitOK, code, out)
}

func TestRandomUsage(t *testing.T) {
	for _, args := range [][]string{
		{"random", "--steps", "0"},
		{"random", "--design", "nope"},
		{"random", "--backend", "model"},
		{"random", "--faults", "(bogus"},
		{"random", "extra"},
	} {
		code, _, _ := runCmd(t, args...)
		assert.Equal(t, exitUsage, code, args)
	}
}
