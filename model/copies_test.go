package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repackAfterForeignWrite: A packs and commits w0, a foreign write changes
// its bytes, B finds it corrupt and re-packs it.
var repackAfterForeignWrite = coldLaunch + `
foreign kind=data name=w0
init proc=B program=P1
lookup proc=B name=w0
reserve proc=B name=w0
insert proc=B name=w0
`

// TestRepackIsANewCopy: a re-pack of a copy a foreign write changed has the
// same key as that copy (and, in the cache, the same size and CRC), yet it is
// another copy: the tombstone of the changed one must not match it, or a
// process holding that tombstone would take the fresh copy for the one it
// dropped and re-pack a second time (G3; the open I4 findings of the
// 5,000-run campaign). A compaction keeps a copy's label.
func TestRepackIsANewCopy(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, ref(t), b, repackAfterForeignWrite)
	s := outs[len(outs)-1].Next
	changed := s.Disk.Idx[0]
	fresh := s.Procs[1].Ents[0].Rec
	require.True(t, changed.Present() && fresh.Present())
	assert.Equal(t, changed.Key(), fresh.Key(), "same packing")
	assert.NotEqual(t, changed.Copy(), fresh.Copy(), "a re-pack is another copy")
	assert.Equal(t, changed.Copy(), s.Procs[1].Tomb[0], "the tombstone names the changed copy")

	outs = run(t, ref(t), b, coldLaunch+`
foreign kind=data name=w0
`+launch("B", "P1", "w0")+`
unload proc=A program=P1
init proc=A program=P1
`)
	s = outs[len(outs)-1].Next
	assert.Equal(t, s.Disk.Idx[0].Copy(), s.Procs[0].Ents[0].Rec.Copy(),
		"A's refresh maps the re-pack instead of keeping the changed copy")
	assert.Zero(t, s.Procs[0].Ents[0].Rec&recCorrupt)
}

// TestCanonicalCopiesKeepsEquality: renumbering keeps which records are the
// same copy and which are not, and is idempotent.
func TestCanonicalCopiesKeepsEquality(t *testing.T) {
	var s State
	s.Disk.Idx[0] = mkRec(0, 0).withLabel(5)
	s.Procs[0].Ents[0].Rec = mkRec(0, 0).withLabel(3)
	s.Procs[0].Tomb[0] = mkRec(0, 0).withLabel(5)
	s.Procs[1].Ents[0].Rec = mkRec(0, 0).withLabel(3) | recCorrupt
	canonicalCopies(&s)
	assert.Equal(t, uint8(1), s.Disk.Idx[0].label())
	assert.Equal(t, uint8(2), s.Procs[0].Ents[0].Rec.label())
	assert.Equal(t, s.Disk.Idx[0].Copy(), s.Procs[0].Tomb[0])
	assert.Equal(t, s.Procs[0].Ents[0].Rec.Copy(), s.Procs[1].Ents[0].Rec.Copy())
	assert.NotZero(t, s.Procs[1].Ents[0].Rec&recCorrupt, "integrity bits stay")
	again := s
	canonicalCopies(&again)
	assert.Equal(t, s, again)
	assert.NotEqual(t, uint8(0), newCopy(&s, 0))
	assert.NotEqual(t, s.Disk.Idx[0].label(), newCopy(&s, 0))
	assert.NotEqual(t, s.Procs[0].Ents[0].Rec.label(), newCopy(&s, 0))
}
