package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// A crashed writer's appended packings become garbage on top of the
// garbage already counted, and only they are volatile: a power loss that
// follows takes back just the space never made durable (G4).
func TestCrashAddsVolatileGarbageOnTopOfDurable(t *testing.T) {
	b := DefaultBounds()
	pre := coldLaunch + `
change-source name=w0
restart proc=A
` + launch("A", "P1", "w0") + `
upgrade-kernel
restart proc=B
init proc=B program=P1
lookup proc=B name=w0
reserve proc=B name=w0
insert proc=B name=w0
`
	outs := run(t, ref(t), b, pre+"crash kind=process proc=B branch=idle\ncrash kind=power branch=idle\n")
	committed := outs[11]
	require.True(t, committed.Result.Wrote)
	require.Equal(t, uint8(1), committed.Next.Disk.Garbage, "one replaced copy, durable")
	require.Zero(t, committed.Next.Disk.Volatile)
	crash := outs[len(outs)-2]
	assert.Equal(t, uint8(2), crash.Next.Disk.Garbage, "B's appended packing joins it")
	assert.Equal(t, uint8(1), crash.Next.Disk.Volatile, "only B's packing is volatile")
	assert.Zero(t, crash.Next.Disk.Lock)
	power := outs[len(outs)-1]
	assert.Equal(t, uint8(1), power.Next.Disk.Garbage, "the power loss takes back the volatile part only")
	assert.Zero(t, power.Next.Disk.Volatile)
}

// The environment's versions go up one at a time within the bounds, and a
// change unsettles every program that packs what changed (G3): an upgrade
// every program, a source change the programs packing that name.
func TestEnvironmentChangesWithinBounds(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	// P1 packs w0 and w1, P2 only w1: a clean launch of each settles it.
	settle := coldP1 + warmLaunch("A", "P2", "w1")
	outs := run(t, ref(t), b, settle)
	s := outs[len(outs)-1].Next
	require.Equal(t, uint8(0b11), s.Env.Settled)

	d := ref(t)
	up := Step(d, b, s, mustOp(t, "upgrade-kernel"))
	require.Len(t, up, 1)
	assert.Equal(t, uint8(1), up[0].Next.Env.Kernel)
	assert.Zero(t, up[0].Next.Env.Settled, "an upgrade unsettles every program")
	assert.Empty(t, Step(d, b, up[0].Next, mustOp(t, "upgrade-kernel")), "two kernel versions: one upgrade")

	src := Step(d, b, s, mustOp(t, "change-source name=w0"))
	require.Len(t, src, 1)
	assert.Equal(t, [maxNames]uint8{1, 0, 0}, src[0].Next.Env.Src)
	assert.Equal(t, uint8(0b10), src[0].Next.Env.Settled, "P2 does not pack w0")
	assert.Empty(t, Step(d, b, src[0].Next, mustOp(t, "change-source name=w0")), "two source versions: one change")
	src = Step(d, b, src[0].Next, mustOp(t, "change-source name=w1"))
	require.Len(t, src, 1)
	assert.Equal(t, [maxNames]uint8{1, 1, 0}, src[0].Next.Env.Src)
	assert.Zero(t, src[0].Next.Env.Settled)
}

func mustOp(t *testing.T, line string) spec.Op {
	t.Helper()
	op, err := spec.ParseOp(line)
	require.NoError(t, err)
	return op
}

// A foreign write to an entry's bytes changes the copy the file lists, as
// every process mapping that copy in the file at the path sees it (late,
// when the process checked it before); a process mapping another copy of
// the name sees nothing. A foreign write to the index voids the last
// commit and unsettles every program (G7).
func TestForeignWrites(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	two := coldP1 + warmLaunch("B", "P1", "w0", "w1")
	outs := run(t, ref(t), b, two+`
unload proc=B program=P1
change-source name=w0
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
lookup proc=A name=w1
finalize proc=A
foreign kind=data name=w0
`)
	o := outs[len(outs)-1]
	a, bb := o.Next.Procs[0].Ents[0], o.Next.Procs[1].Ents[0]
	require.True(t, bb.CurIno && bb.Status == spec.EntryLoaded, "B still maps its copy in the file at the path")
	require.NotEqual(t, a.Rec.Copy(), bb.Rec.Copy())
	assert.Equal(t, recCorrupt|recLate, a.Rec&(recCorrupt|recLate), "A's copy changed after A packed it")
	assert.Zero(t, bb.Rec&(recCorrupt|recLate), "B's copy is other bytes")
	assert.NotZero(t, o.Next.Disk.Idx[0]&recCorrupt)
	assert.Zero(t, o.Next.Disk.Idx[1]&recCorrupt)

	outs = run(t, ref(t), b, two+"init proc=A program=P2\nlookup proc=A name=w1\nfinalize proc=A\nforeign kind=index\n")
	require.Equal(t, uint8(0b11), outs[len(outs)-2].Next.Env.Settled)
	o = outs[len(outs)-1]
	assert.Equal(t, DiskCorrupt, o.Next.Disk.State)
	assert.False(t, o.Next.GhostValid)
	assert.Equal(t, [maxNames]Rec{}, o.Next.Ghost)
	assert.Zero(t, o.Next.Env.Settled, "every program")
	assert.Empty(t, Step(ref(t), b, o.Next, mustOp(t, "foreign kind=index")), "an unreadable index is not written again")
	assert.Empty(t, Step(ref(t), b, o.Next, mustOp(t, "foreign kind=data name=w0")))
}
