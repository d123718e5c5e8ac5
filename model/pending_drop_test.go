package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
init proc=B program=P1
lookup proc=B name=w0
finalize proc=B
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
