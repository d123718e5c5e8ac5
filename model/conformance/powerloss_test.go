package conformance

import (
	"bytes"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/spec"
)

// A first launch of P2 (which uses w1 only) commits w1, then the power
// fails at step 6, whose loss mode keeps none of the unsynced writes
// (lossModes[6%3]).
const commitThenPowerLoss = `
init proc=A program=P2
lookup proc=A name=w1
reserve proc=A name=w1
insert proc=A name=w1
finalize proc=A
crash kind=power branch=idle
`

// The file exists, and a second launch appends w0 and commits in place;
// the power fails at step 12, which keeps none of the unsynced writes.
const appendThenPowerLoss = `
init proc=A program=P2
lookup proc=A name=w1
reserve proc=A name=w1
insert proc=A name=w1
finalize proc=A
init proc=B program=P1
lookup proc=B name=w0
reserve proc=B name=w0
insert proc=B name=w0
lookup proc=B name=w1
finalize proc=B
crash kind=power branch=idle
`

// lies returns an injector under which the named flushes of the cache's
// files report success and flush nothing: a commit that skips them.
func lies(t *testing.T, kinds string) errorfs.Injector {
	inj, err := errorfs.Parse(`(if (ops ` + kinds + `) lie)`)
	require.NoError(t, err)
	return inj
}

// A commit that returned must survive power loss (G2). The harness must
// reject the history of a commit that skips its flushes: the model keeps
// the commit, the file after the power loss does not have it (a new file
// whose rename was not made durable; an append whose commit slot was not).
// The same histories with honest flushes conform.
func TestPowerLossOfUnsyncedCommitRejected(t *testing.T) {
	d, err := harnessDesign()
	require.NoError(t, err)
	for name, text := range map[string]string{"new-file": commitThenPowerLoss, "append": appendThenPowerLoss} {
		ops, err := spec.ParseTrace(text)
		require.NoError(t, err)
		t.Run(name, func(t *testing.T) {
			honest, err := newWorld(t.TempDir(), worldConfig{backend: backendCrashFS})
			require.NoError(t, err)
			defer honest.close()
			require.NoError(t, honest.run(&d, bounds(), ops, nil))

			for _, kinds := range []string{"syncdir", "syncdata", "sync syncdata syncdir msync"} {
				w, err := newWorld(t.TempDir(), worldConfig{backend: backendCrashFS, faults: lies(t, kinds)})
				require.NoError(t, err)
				err = w.run(&d, bounds(), ops, nil)
				w.close()
				if name == "new-file" && kinds == "syncdata" {
					// A new file is synced whole by fsync before its
					// rename: skipping fdatasync costs it nothing.
					assert.NoError(t, err, kinds)
					continue
				}
				require.Error(t, err, "%s: a commit lost to power loss conforms", kinds)
				assert.Contains(t, err.Error(), "crash kind=power", kinds)
				assert.Contains(t, err.Error(), "file", kinds)
			}
		})
	}
}

// gopter's random sequences find the same violation on their own when the
// flushes lie, and print a short sequence ending in a power loss.
func TestConformanceFindsLostCommit(t *testing.T) {
	d, err := harnessDesign()
	require.NoError(t, err)
	params := gopter.DefaultTestParametersWithSeed(11)
	params.MinSuccessfulTests = 2000
	params.MaxSize = 40
	props := gopter.NewProperties(params)
	var n tally
	cfg := worldConfig{backend: backendCrashFS, faults: lies(t, "sync syncdata syncdir msync")}
	props.Property("lying flushes against the model", commands.Prop(protoCommands(&d, bounds(), t.TempDir(), &n, cfg)))
	var out bytes.Buffer
	ok := props.Run(gopter.NewFormatedReporter(true, 100, &out))
	require.False(t, ok, "commits that are never flushed survive power loss?")
	// A power loss between operations: every commit before it returned.
	assert.Contains(t, out.String(), "crash kind=power branch=idle: file")
	t.Logf("found after %d sequences:\n%s", n.seqs, out.String())
}
