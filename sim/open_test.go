package sim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// TestOpenFindingsStillViolate pins the open findings of docs/scenarios.md
// ("Findings not yet resolved"): each sequence in testdata/open agrees with
// the cache in lockstep up to its last op, where the model's I4 ghost (G3)
// flags a second re-pack after one corruption. When a fix makes a sequence
// converge, this test fails and the sequence moves to testdata/scenarios
// as a conformance-* regression.
func TestOpenFindingsStillViolate(t *testing.T) {
	files, err := filepath.Glob("testdata/open/*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ops, b := openOps(t, path)
			err := RunOps(Config{Backend: BackendCrashFS}, "", b, ops)
			var v *ViolationError
			require.True(t, errors.As(err, &v), "want an I4 violation at the last op, got %v", err)
			assert.Equal(t, len(ops), v.Step)
			assert.Equal(t, []spec.InvariantID{spec.InvConverge}, v.Invariants)
		})
	}
}

// openOps reads a file of testdata/open: one
// op per line (comments and the bounds line aside), run with three names.
func openOps(t *testing.T, path string) ([]spec.Op, model.Bounds) {
	t.Helper()
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	var ops []spec.Op
	for _, line := range strings.Split(string(text), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "bounds ") {
			continue
		}
		op, err := spec.ParseOp(line)
		require.NoError(t, err, line)
		ops = append(ops, op)
	}
	b := model.DefaultBounds()
	b.Names = 3
	return ops, b
}
