package sim

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// Generate is the sequence gopter's commands draw from a seed: the same
// every time, every op enabled where it is drawn, as long as asked.
func TestGenerateIsGoptersDraw(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.DefaultBounds()
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		ops := Generate(seed, 40, d, b, GenOptions{})
		require.Len(t, ops, 40)
		assert.True(t, Replayable(d, b, ops), "seed %d", seed)
		assert.Equal(t, ops, Generate(seed, 40, d, b, GenOptions{}), "seed %d draws one sequence", seed)
		seen[spec.FormatTrace(ops)] = true
	}
	assert.Len(t, seen, 20, "seeds draw different sequences")
}

// hitless is a broken implementation: its look-ups never hit.
type hitless struct{ Instance }

func (hitless) LookUp(spec.Key) (Handle, bool) { return 0, false }

func openHitless(path string, fsys vfs.FS) (Instance, error) {
	in, err := OpenGo(path, fsys)
	if err != nil {
		return nil, err
	}
	return hitless{in}, nil
}

// A broken implementation fails the gopter property: gopter's commands
// shrink the failing sequence, delta debugging may shrink it further, and
// the scenario written replays to the same failure against that
// implementation, while the in-process cache passes it.
func TestBrokenImplementationFailsTheProperty(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.DefaultBounds()
	cfg := Config{Backend: BackendOS, Open: openHitless}
	var c Checked
	seed := uint64(1)
	for ; seed <= 10 && !c.Failed(); seed++ {
		c = CheckSeed(cfg, d, b, seed, 60, "TestBrokenImplementationFailsTheProperty")
	}
	require.True(t, c.Failed(), "no seed found the broken look-up")
	var derr *DivergenceError
	require.True(t, errors.As(c.Final, &derr), "%v", c.Final)
	t.Logf("seed %d: %d ops generated, %d after gopter's shrinking, %d after delta debugging\n%s", seed-1, c.Ops, len(c.Gopter), len(c.Shrunk), c.Scenario)
	var first *DivergenceError
	require.True(t, errors.As(c.Err, &first))
	assert.Less(t, len(c.Gopter), first.Step, "gopter shrank the generated run's %d ops", first.Step)
	assert.LessOrEqual(t, len(c.Shrunk), len(c.Gopter))
	assert.True(t, Replayable(d, b, c.Shrunk))

	f := File{Name: "found", Text: c.Scenario}
	rep := RunScenario(f, Config{Backend: BackendOS, Dir: t.TempDir(), Open: openHitless})
	require.Error(t, rep.Err, "the scenario reproduces the failure")
	assert.Equal(t, Signature(c.Final), Signature(rep.Err))
	rep = RunScenario(f, Config{Backend: BackendOS, Dir: t.TempDir(), Open: OpenGo})
	assert.True(t, rep.OK(), "the cache passes it: %v %v", rep.Err, rep.Mismatches)
}

// One harness: the lockstep property run on a seed (CheckSeed, as simrun
// random and model/conformance run it) steps exactly the sequence Generate
// draws from that seed, on every backend.
func TestPropertyRunsGeneratesSequence(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.DefaultBounds()
	for _, backend := range []Backend{BackendCrashFS, BackendOS} {
		for seed := uint64(1); seed <= 3; seed++ {
			opt := GenOptions{Power: backend == BackendCrashFS}
			l := newLockstep(Config{Backend: backend, FileEachStep: true}, d, b, opt)
			res := l.check(seed, 40)
			require.True(t, res.Passed(), "%s seed %d: %v", backend, seed, l.first.err)
			assert.Equal(t, Generate(seed, 40, d, b, opt), l.first.drawn, "%s seed %d", backend, seed)
			assert.Len(t, l.first.performed, 40)
		}
	}
}
