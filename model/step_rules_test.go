package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// Rules of Step itself and of the compute's re-pack, pinned on the model
// alone: docs/mutation.md lists the mutants of step.go and
// step_compute.go these tests were shown failing on.

// An op naming a name, process or program beyond the bounds is not
// enabled, the environment's included.
func TestOpsJustOutsideTheBounds(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	s := Init(b)
	for _, text := range []string{"change-source name=w1"} {
		assert.Len(t, Step(ref(t), b, s, mustOp(t, text)), 1, "%s at two names", text)
		one := b
		one.Names = 1
		assert.Empty(t, Step(ref(t), one, Init(one), mustOp(t, text)), "%s at one name", text)
	}
}

// A source change stales the launches in progress that pack the changed
// name: they neither owe a hit nor count as clean; a launch of a program
// without that name, and a process between launches, keep what they had.
func TestSourceChangeStalesLaunchesInProgress(t *testing.T) {
	b := DefaultBounds()
	b.Names = 3
	settleP1 := coldP1 + "init proc=B program=P1\n"
	outs := run(t, ref(t), b, settleP1)
	before := outs[len(outs)-1].Next
	require.Equal(t, spec.PhasePacking, before.Procs[1].Phase)
	require.True(t, before.Procs[1].Expect && before.Procs[1].Clean, "B's launch of settled P1")
	require.Equal(t, spec.PhaseIdle, before.Procs[0].Phase)

	o := last(t, ref(t), b, settleP1+"change-source name=w2\n")
	assert.Equal(t, before.Procs, o.Next.Procs, "P1 does not pack w2")

	o = last(t, ref(t), b, settleP1+"change-source name=w1\n")
	assert.False(t, o.Next.Procs[1].Expect, "B packs w1")
	assert.False(t, o.Next.Procs[1].Clean)
	assert.Equal(t, before.Procs[0], o.Next.Procs[0], "A is between launches")
}

// A compute's re-pack that goes to the file is no fall-back: later hits on
// it do not mark their launch as blocked.
func TestComputeRepackInTheFileIsNoFallback(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, design(t, "on-compute"), b, warmLaunchThenRot+"compute proc=B name=w0\n")
	c := outs[len(outs)-1]
	require.Equal(t, spec.PlaceFile, c.Result.Place)
	assert.False(t, c.Next.Procs[1].Ents[0].Fallback)
}
