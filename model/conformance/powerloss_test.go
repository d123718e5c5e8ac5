package conformance

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// A first launch of P2 (which uses w1 only) commits w1, then the power
// fails at step 6, whose loss mode keeps none of the unsynced writes
// (sim.PowerLossAt).
const commitThenPowerLoss = `
init proc=A program=P2
lookup proc=A name=w1
reserve proc=A name=w1
insert proc=A name=w1
finalize proc=A
crash kind=power branch=idle
`

// The file exists (w1 and w2, three names in play), and a second launch
// appends w0 and commits in place (no compaction: the garbage is small
// against the live bytes); the power fails at step 15, which keeps none of
// the unsynced writes.
const appendThenPowerLoss = `
init proc=A program=P2
lookup proc=A name=w1
lookup proc=A name=w2
reserve proc=A name=w1
insert proc=A name=w1
reserve proc=A name=w2
insert proc=A name=w2
finalize proc=A
init proc=B program=P1
lookup proc=B name=w0
reserve proc=B name=w0
insert proc=B name=w0
lookup proc=B name=w1
finalize proc=B
crash kind=power branch=idle
`

// lies is the errorfs spec under which the named flushes of the cache's
// files report success and flush nothing: a commit that skips them.
func lies(kinds string) string { return `(if (ops ` + kinds + `) lie)` }

// A commit that returned must survive power loss (G2). sim's lockstep
// world must reject the history of a commit that skips its flushes: the
// model keeps the commit, the file after the power loss (the last step)
// does not have it (a new file whose rename was not made durable; an
// append whose commit slot was not). The same histories with honest
// flushes conform.
func TestPowerLossOfUnsyncedCommitRejected(t *testing.T) {
	for name, h := range map[string]struct {
		text  string
		names int
	}{"new-file": {commitThenPowerLoss, 2}, "append": {appendThenPowerLoss, 3}} {
		ops, err := spec.ParseTrace(h.text)
		require.NoError(t, err)
		b := model.DefaultBounds()
		b.Names = h.names
		t.Run(name, func(t *testing.T) {
			honest := slices.Clone(ops)
			require.NoError(t, sim.RunOps(sim.Config{Backend: sim.BackendCrashFS}, "", b, honest))
			if name == "append" {
				require.Equal(t, spec.BranchNone, honest[13].Branch, "the second launch commits in place")
			}
			for _, kinds := range []string{"syncdir", "syncdata", "sync syncdata syncdir msync"} {
				err := sim.RunOps(sim.Config{Backend: sim.BackendCrashFS, Faults: lies(kinds)}, "", b, slices.Clone(ops))
				if name == "new-file" && kinds == "syncdata" {
					// A new file is synced whole by fsync before its
					// rename: skipping fdatasync costs it nothing.
					assert.NoError(t, err, kinds)
					continue
				}
				var d *sim.DivergenceError
				require.ErrorAs(t, err, &d, "%s: a commit lost to power loss conforms", kinds)
				assert.Equal(t, "file", d.What, kinds)
				assert.Equal(t, len(ops), d.Step, "%s: found after the power loss, the last step", kinds)
			}
		})
	}
}

// The property finds the same violation on its own when the flushes lie,
// and writes a short scenario ending in a power loss.
func TestConformanceFindsLostCommit(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.DefaultBounds()
	b.Names = 2
	p := property{cfg: sim.Config{Backend: sim.BackendCrashFS, Faults: lies("sync syncdata syncdir msync")}, d: d, b: b, steps: 40,
		found: "TestConformanceFindsLostCommit, seed %d"}
	_, _, fail, err := p.check(1, 2000, t.TempDir())
	require.NoError(t, err)
	require.NotNil(t, fail, "commits that are never flushed survive power loss?")
	// A power loss between operations: every commit before it returned.
	assert.Contains(t, fail.Scenario, "crash kind=power branch=idle")
	t.Logf("found:\n%s", fail)
}
