package model

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/xpwc/xpwc/spec"
)

// An invalidation whose commit is pending (the writer lock was busy) has
// not reached the file: a launch that hits the dropped packing meanwhile
// did not see what the invalidating process's next launch will see, so it
// does not start the convergence clock (G3). Found by the explorer at depth
// 16 once it ran past the old default depth of 14: the model owed A's
// relaunch a hit on the name A itself had dropped.
func TestPendingDropIsNotSettled(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, ref(t), b, `
init proc=A program=P1
init proc=B program=P1
lookup proc=B name=w0
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
finalize proc=A
unload proc=A program=P1
reserve proc=B name=w0
invalidate proc=A name=w0
crash kind=process proc=B branch=idle
`+warmLaunch("B", "P1", "w0")+`
init proc=A program=P1
lookup proc=A name=w0
`)
	prev := Init(b)
	for _, o := range outs {
		assert.Empty(t, Check(b, Transition{Prev: &prev, Out: &o}), o.Op.String())
		prev = o.Next
	}
	assert.True(t, outs[9].Result.Failed, "the invalidation's commit waits for B's lock")
	assert.True(t, outs[12].Result.Hit, "B's launch hits the packing A dropped")
	assert.Zero(t, outs[13].Next.Env.Settled, "B's launch hit a packing whose drop is pending")
	assert.False(t, outs[len(outs)-1].Result.Hit, "A misses the name it dropped: not a miss it owed")
}

// Under on-compute a look-up hands out an entry unchecked; when its bytes
// are corrupt, the compute's check re-packs it, so the launch that hit it
// is not the one after which every launch hits (G3). Found by exhausting
// on-compute at one program, one kernel and one source: the model counted
// A's launch clean, and A's relaunch, whose compute's re-pack had gone to
// the heap (B held the lock) and whose drop was still pending, was owed a
// hit.
func TestUncheckedCorruptHitIsNotClean(t *testing.T) {
	b := Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 1, Sources: 1, Foreign: true}
	outs := run(t, design(t, "on-compute"), b, `
init proc=A program=P1
init proc=B program=P1
lookup proc=B name=w0
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
finalize proc=A
destroy proc=A
foreign kind=data name=w0
init proc=A program=P1
reserve proc=B name=w0
lookup proc=A name=w0
finalize proc=A
compute proc=A name=w0
unload proc=A program=P1
crash kind=process proc=B branch=idle
init proc=A program=P1
lookup proc=A name=w0
`)
	prev := Init(b)
	for _, o := range outs {
		assert.Empty(t, Check(b, Transition{Prev: &prev, Out: &o}), o.Op.String())
		prev = o.Next
	}
	assert.True(t, outs[11].Result.Hit, "the look-up hands out the corrupt entry unchecked")
	assert.Zero(t, outs[12].Next.Env.Settled, "the launch hit bytes its compute will re-pack")
	assert.Equal(t, spec.ReasonLockBusy, outs[13].Result.Reason, "the compute's re-pack goes to the heap: B holds the lock")
}
