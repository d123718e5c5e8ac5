package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// The liveness predicates pinned on the model alone (model/explore's
// verdicts rest on them, but gremlins counts only this package's tests):
// which steps are the environment's, which step is a launch, which launch
// is the converged one I4 promises, and when every process runs the
// installed versions. docs/mutation.md lists the mutants of liveness.go
// these tests were shown failing on.

func TestQuietIsEveryStepButTheEnvironments(t *testing.T) {
	quiet := map[spec.OpKind]bool{
		spec.OpInit: true, spec.OpLookUp: true, spec.OpReserve: true, spec.OpInsert: true,
		spec.OpFinalize: true, spec.OpSave: true, spec.OpUnload: true, spec.OpDestroy: true,
		spec.OpCompute: true,
	}
	for k := spec.OpInit; k <= spec.EvClobberOptions; k++ {
		assert.Equal(t, quiet[k], Quiet(spec.Op{Kind: k}), "%s", k)
	}
}

// transitions replays text and returns each step as a Transition.
func transitions(t *testing.T, d *Design, b Bounds, text string) []Transition {
	t.Helper()
	outs := run(t, d, b, text)
	ts := make([]Transition, len(outs))
	prev := Init(b)
	for i := range outs {
		p := prev
		ts[i] = Transition{Prev: &p, Out: &outs[i]}
		prev = outs[i].Next
	}
	return ts
}

// P1 packs w0 and w1; at three names w2 is outside it, so a converged
// launch of P1 owes nothing on w2.
func TestConvergedLaunch(t *testing.T) {
	b := DefaultBounds()
	b.Names = 3
	ts := transitions(t, ref(t), b, coldP1+warmLaunch("B", "P1", "w0", "w1"))
	cold, warm := ts[7], ts[11]
	require.Equal(t, spec.OpFinalize, warm.Out.Op.Kind)
	require.True(t, warm.Out.Result.Wrote == false && cold.Out.Result.Wrote)

	assert.True(t, Launched(cold) && Launched(warm))
	assert.False(t, Launched(ts[0]), "an init ends no launch")
	assert.False(t, Launched(ts[9]), "a look-up ends no launch")

	assert.False(t, ConvergedLaunch(b, cold), "the cold launch writes")
	assert.True(t, ConvergedLaunch(b, warm), "every name of P1 hit from the file, nothing written")
	assert.False(t, ConvergedLaunch(b, ts[10]), "a look-up is no launch, even the last hit")

	// The same launch on a process that wrote the file: its entries are
	// committed, not loaded, and count as well.
	ts = transitions(t, ref(t), b, coldP1+"unload proc=A program=P1\n"+warmLaunch("A", "P1", "w0", "w1"))
	again := ts[len(ts)-1]
	for n := 0; n < 2; n++ {
		e := again.Prev.Procs[0].Ents[n]
		require.Equal(t, spec.EntryCommitted, e.Status, "w%d", n)
		require.Equal(t, stepHit, e.Step, "w%d", n)
	}
	assert.False(t, again.Out.Result.Wrote)
	assert.True(t, ConvergedLaunch(b, again))
}

// A launch that fell back to the heap, or hit a heap packing, is not the
// file as it wants it, though it writes nothing.
func TestHeapLaunchIsNotConverged(t *testing.T) {
	b := DefaultBounds()
	ts := transitions(t, ref(t), b, lockBusy+"insert proc=B name=w0\nfinalize proc=B\n"+warmLaunch("B", "P2", "w0"))
	fin := ts[7]
	pr := fin.Prev.Procs[1]
	require.True(t, pr.Blocked, "B found the lock busy")
	assert.False(t, fin.Out.Result.Wrote)
	assert.False(t, ConvergedLaunch(b, fin))

	// P2 (w0 at one name) hits the heap packing P1 still holds.
	fin = ts[len(ts)-1]
	e := fin.Prev.Procs[1].Ents[0]
	require.Equal(t, stepHit, e.Step)
	require.Equal(t, spec.EntryHeap, e.Status)
	assert.False(t, fin.Out.Result.Wrote)
	assert.False(t, ConvergedLaunch(b, fin))
}

// A launch that packed a name writes nothing when the same packing
// arrived in the file meanwhile, yet it did not find the file as it
// wants it.
func TestLaunchThatPackedIsNotConverged(t *testing.T) {
	b := DefaultBounds()
	ts := transitions(t, ref(t), b, arrivedMeanwhile)
	fin := ts[len(ts)-1]
	pr := fin.Prev.Procs[1]
	require.False(t, fin.Out.Result.Wrote)
	require.False(t, pr.Blocked || pr.NoFile)
	require.Equal(t, spec.EntryLoaded, pr.Ents[0].Status)
	assert.False(t, ConvergedLaunch(b, fin))
}

func TestCurrentMeansInstalledVersions(t *testing.T) {
	b := DefaultBounds()
	b.Names = 3
	s := Init(b)
	assert.True(t, Current(b, &s))

	up := s
	up.Env.Kernel = 1
	assert.False(t, Current(b, &up), "both processes run the old kernel")
	up.Procs[0].Kernel = 1
	assert.False(t, Current(b, &up), "B still runs the old kernel")
	up.Procs[1].Kernel = 1
	assert.True(t, Current(b, &up))

	one := b
	one.Procs = 1
	up.Procs[1].Kernel = 0
	assert.True(t, Current(one, &up), "a second process outside the bounds is not looked at")

	for n := 0; n < 3; n++ {
		src := s
		src.Env.Src[n] = 1
		assert.False(t, Current(b, &src), "w%d changed", n)
		src.Procs[0].Src[n], src.Procs[1].Src[n] = 1, 1
		assert.True(t, Current(b, &src), "w%d", n)
	}
}
