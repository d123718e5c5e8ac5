package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// warmLaunchThenRot is A's cold launch, B's warm launch of the same
// program, and a foreign write to w0's bytes after B's finalize.
var warmLaunchThenRot = coldLaunch + warmLaunch("B", "P1", "w0") + "foreign kind=data name=w0\n"

// Under on-compute a warm launch hands w0 out unchecked; corruption found
// at the first compute after finalize is re-packed into the file under the
// writer lock, committed, and the output is computed from the new bytes.
// Under on-first-use the same look-up catches it instead, and the compute
// only reads.
func TestComputeRepacksCorruptionAfterFinalize(t *testing.T) {
	b := DefaultBounds()
	trace := warmLaunchThenRot + "compute proc=B name=w0\ncompute proc=B name=w0\n"
	outs := run(t, design(t, "on-compute"), b, trace)
	hit, first, again := outs[6], outs[9], outs[10]
	assert.True(t, hit.Result.Hit)
	assert.False(t, hit.Result.Checked, "on-compute checks at the compute, not the look-up")
	assert.NotZero(t, hit.Events&EvtUncheckedHandle)

	assert.True(t, first.Result.Checked)
	assert.NotZero(t, first.Events&EvtComputeRepack)
	assert.Equal(t, spec.Packing{Intact: true}, first.Result.Bytes, "the output is computed from the re-packed bytes")
	assert.Equal(t, spec.PlaceFile, first.Result.Place)
	assert.True(t, first.Result.Wrote, "the re-pack is saved")
	s := first.Next
	assert.Zero(t, s.Disk.Lock, "the save gives the writer lock back")
	assert.Equal(t, DiskValid, s.Disk.State)
	assert.Zero(t, s.Disk.Idx[0]&recCorrupt, "the file lists the re-packed copy")
	e := s.Procs[1].Ents[0]
	assert.Equal(t, spec.EntryCommitted, e.Status)
	assert.True(t, e.Verified)
	assert.NotZero(t, e.Hold, "the program that held the corrupt entry holds the new one")
	assert.Empty(t, Check(b, Transition{Prev: &outs[8].Next, Out: &first}))

	assert.False(t, again.Result.Checked, "checked once")
	assert.False(t, again.Result.Wrote)
	assert.Equal(t, first.Next, again.Next)

	// On first use, the look-up checks (the bytes were intact then) and
	// the foreign write comes after: the compute hands late-corrupt bytes,
	// which G1 does not promise to catch, and writes nothing.
	routs := run(t, ref(t), b, trace)
	assert.True(t, routs[6].Result.Checked)
	assert.False(t, routs[9].Result.Checked)
	assert.Equal(t, spec.Packing{LateCorrupt: true}, routs[9].Result.Bytes)
	assert.Equal(t, routs[8].Next, routs[9].Next)
}

// A re-pack at compute while another process (here one running a newer
// kernel, re-packing its stale w0) holds the writer lock goes to
// the heap with the reason (G8), and the commit dropping the corrupt entry
// stays pending; the compute does not fail.
func TestComputeRepackOnBusyLock(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, design(t, "on-compute"), b, warmLaunchThenRot+`upgrade-kernel
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
compute proc=B name=w0
`)
	c := outs[len(outs)-1]
	assert.Equal(t, spec.Result{Checked: true, Place: spec.PlaceHeap, Reason: spec.ReasonLockBusy, Bytes: spec.Packing{Intact: true}}, c.Result)
	assert.Equal(t, uint8(1), c.Next.Disk.Lock, "A keeps the lock")
	e := c.Next.Procs[1].Ents[0]
	assert.Equal(t, spec.EntryHeap, e.Status)
	assert.True(t, e.Fallback)
	assert.True(t, dirty(&c.Next.Procs[1]), "the corrupt copy's drop is pending")
}

// The compute is offered only after finalize, for a name a loaded program
// holds.
func TestComputeEnabledAfterFinalizeForHeldNames(t *testing.T) {
	b := DefaultBounds()
	d := design(t, "on-compute")
	c := spec.Op{Kind: spec.OpCompute, Proc: 0, Name: 0}
	s := Init(b)
	assert.Empty(t, Step(d, b, s, c), "no instance")
	outs := run(t, d, b, coldLaunch)
	for _, o := range outs[:len(outs)-1] {
		assert.Empty(t, Step(d, b, o.Next, c), "while packing, after %s", o.Op)
	}
	s = outs[len(outs)-1].Next
	assert.Len(t, Step(d, b, s, c), 1)
	o := Step(d, b, s, spec.Op{Kind: spec.OpUnload})
	require.Len(t, o, 1)
	assert.Empty(t, Step(d, b, o[0].Next, c), "no program holds it")
}
