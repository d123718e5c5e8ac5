package sim

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

const thresholdScenario = "testdata/scenarios/conformance-compaction-threshold-differs"

// A scenario that does not name a compaction the cache makes diverges at
// that commit (the comparison of compaction decisions can fail).
func TestCompactionMismatchDetected(t *testing.T) {
	b, err := os.ReadFile(thresholdScenario)
	require.NoError(t, err)
	text := strings.Replace(string(b), " branch=compact", "", 1)
	require.NotEqual(t, string(b), text)
	rep := RunScenario(File{Name: "unnamed-compaction", Text: text}, Config{Backend: BackendCrashFS})
	var d *DivergenceError
	require.ErrorAs(t, rep.Err, &d)
	assert.Equal(t, "compaction", d.What)
	assert.Equal(t, "append", d.Model)
	assert.Equal(t, "compact", d.Cache)
}

// A generated sequence adopts the cache's decision and records it in the
// op, so the same ops replay in the model alone.
func TestRunOpsAdoptsCompaction(t *testing.T) {
	f, err := os.ReadFile(thresholdScenario)
	require.NoError(t, err)
	ds, err := ParseScenario(string(f))
	require.NoError(t, err)
	var ops []spec.Op
	named := -1
	for _, d := range ds {
		op, err := spec.ParseOp(d.Text)
		if err != nil {
			continue // bounds and other non-op directives
		}
		if op.Branch == spec.BranchCompact {
			named = len(ops)
			op.Branch = spec.BranchNone
		}
		ops = append(ops, op)
	}
	require.GreaterOrEqual(t, named, 0)
	b := model.DefaultBounds()
	require.NoError(t, RunOps(Config{Backend: BackendCrashFS}, "", b, ops))
	assert.Equal(t, spec.BranchCompact, ops[named].Branch)
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	assert.True(t, Replayable(d, b, ops))
}
