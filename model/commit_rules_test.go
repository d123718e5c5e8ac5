package model

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// The commit rules pinned one by one, on the model alone: who holds the
// writer lock after a commit, what a commit counts as garbage, when it
// rewrites the file, and what it tells other programs (G2, G3, G4, G6,
// G7, G8). Each assertion names the rule; docs/mutation.md lists the
// mutants of commit.go these tests were shown failing on.

// last replays text and returns its last outcome.
func last(t *testing.T, d *Design, b Bounds, text string) Outcome {
	t.Helper()
	outs := run(t, d, b, text)
	require.NotEmpty(t, outs)
	return outs[len(outs)-1]
}

// A commit outside a launch takes the writer lock and gives it back; one
// inside a launch keeps it for the launch's next reservations.
func TestCommitLockOutsideAndInsideALaunch(t *testing.T) {
	b := DefaultBounds()
	d := ref(t)

	// Idle: an invalidation commits and releases the lock.
	o := last(t, d, b, coldLaunch+"unload proc=A program=P1\ninvalidate proc=A name=w0\n")
	assert.True(t, o.Result.Wrote)
	assert.Zero(t, o.Next.Disk.Lock, "an idle commit gives the lock back")
	assert.False(t, o.Next.Procs[0].Replacing)
	assert.False(t, o.Next.Disk.Idx[0].Present(), "the invalidated packing left the index")
	assert.Equal(t, uint8(1), o.Next.Disk.Garbage, "its bytes are garbage")
	assert.NotZero(t, o.Events&EvtInvalidated)
	assert.Zero(t, o.Events&(EvtReplace|EvtCompact), "a valid file is appended to")

	// In a launch: B finds w0 corrupt, drops it, and saves before its
	// reservation: the commit takes the lock, and B keeps it.
	outs := run(t, d, b, coldLaunch+`
foreign kind=data name=w0
init proc=B program=P1
lookup proc=B name=w0
save proc=B
reserve proc=B name=w0
`)
	save := outs[len(outs)-2]
	require.True(t, save.Result.Wrote, "the drop is committed")
	assert.Equal(t, uint8(2), save.Next.Disk.Lock, "B keeps the lock for its launch")
	assert.False(t, save.Next.Disk.Idx[0].Present())
	assert.Equal(t, uint8(1), save.Next.Disk.Garbage)
	reserve := outs[len(outs)-1]
	assert.Equal(t, spec.PlaceFile, reserve.Result.Place)
	assert.Equal(t, spec.ReasonNone, reserve.Result.Reason)

	// In a launch that holds the lock already: the save commits under it.
	outs = run(t, d, b, `
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
save proc=A
finalize proc=A
`)
	save, fin := outs[len(outs)-2], outs[len(outs)-1]
	assert.True(t, save.Result.Wrote)
	assert.Equal(t, uint8(1), save.Next.Disk.Lock)
	assert.Equal(t, spec.EntryCommitted, save.Next.Procs[0].Ents[0].Status)
	assert.False(t, fin.Result.Wrote, "nothing new since the save (G4)")
	assert.Zero(t, fin.Next.Disk.Lock, "finalize gives the lock back")
}

// A commit that finds the lock busy fails with a reason and keeps what it
// would commit (G8); the next one, after another writer replaced the
// packing, finds nothing left to drop and writes nothing.
func TestCommitOnBusyLockStaysPending(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, ref(t), b, coldLaunch+warmLaunch("B", "P1", "w0")+`
unload proc=B program=P1
change-source name=w0
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
invalidate proc=B name=w0
insert proc=A name=w0
finalize proc=A
save proc=B
`)
	inv := outs[len(outs)-4]
	assert.True(t, inv.Result.Failed)
	assert.Equal(t, spec.ReasonLockBusy, inv.Result.Reason)
	assert.False(t, inv.Result.Wrote)
	assert.True(t, inv.Next.Procs[1].Tomb[0].Present(), "the drop stays pending")
	assert.Equal(t, uint8(1), inv.Next.Disk.Lock, "A keeps the lock")
	assert.Zero(t, inv.Events&EvtInvalidated, "nothing was committed")

	save := outs[len(outs)-1]
	assert.False(t, save.Result.Wrote, "A's re-pack replaced the copy B dropped: nothing to drop")
	assert.False(t, save.Result.Failed)
	assert.Zero(t, save.Next.Procs[1].Tomb[0])
	assert.Zero(t, save.Next.Disk.Lock)
	assert.True(t, save.Next.Disk.Idx[0].Present())
	assert.Equal(t, mkRec(0, 1), save.Next.Disk.Idx[0].Key(), "A's packing of the new source")
}

// An idle commit on an unreadable index replaces the file by rename (G7),
// even with nothing left to list; on a readable one it appends.
func TestIdleCommitOnUnreadableIndexReplaces(t *testing.T) {
	b := DefaultBounds()
	o := last(t, ref(t), b, coldLaunch+`
foreign kind=index
unload proc=A program=P1
invalidate proc=A name=w0
`)
	assert.True(t, o.Result.Wrote)
	assert.NotZero(t, o.Events&EvtReplace)
	assert.Equal(t, DiskValid, o.Next.Disk.State)
	assert.Zero(t, o.Next.Disk.Live())
	assert.Zero(t, o.Next.Disk.Garbage, "a new file has no garbage")
	assert.Zero(t, o.Next.Disk.Lock)
	assert.False(t, o.Next.Procs[0].Replacing)
	assert.True(t, o.Next.GhostValid)
}

// A commit whose session began on an unreadable index writes the new file
// and renames it (G7): the committer's fresh packings are in the file at
// the path, its older mappings are not.
func TestReplaceKeepsOnlyFreshMappingsCurrent(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	outs := run(t, ref(t), b, coldP1+`
foreign kind=index
change-source name=w1
restart proc=B
`+launch("B", "P1", "w0", "w1"))
	o := outs[len(outs)-1]
	require.True(t, o.Result.Wrote)
	assert.NotZero(t, o.Events&EvtReplace)
	assert.Zero(t, o.Events&EvtCompact)
	assert.Zero(t, o.Next.Disk.Garbage)
	assert.True(t, o.Next.Procs[1].Ents[0].CurIno && o.Next.Procs[1].Ents[1].CurIno, "B's packings are in the new file")
	assert.False(t, o.Next.Procs[0].Ents[0].CurIno, "A maps the replaced file")
	assert.Equal(t, mkRec(0, 0), o.Next.Disk.Idx[0].Key())
	assert.Equal(t, mkRec(0, 1), o.Next.Disk.Idx[1].Key())
	assert.Equal(t, [maxNames]Rec{mkRec(0, 0), mkRec(0, 1)}, o.Next.Ghost, "the ghost is the new index's keys")
}

// Garbage: each replaced or dropped copy counts one; a commit appends while
// garbage is at most the live count (at least one) and rewrites the file
// once it is more (G4, I6). A compaction keeps every copy and leaves every
// mapping on the old inode.
func TestCommitGarbageThreshold(t *testing.T) {
	b := DefaultBounds()
	relaunch := `
restart proc=A
` + launch("A", "P1", "w0")
	outs := run(t, ref(t), b, coldLaunch+"change-source name=w0\n"+relaunch+"upgrade-kernel\n"+relaunch)
	first, second := outs[4], outs[11]
	require.True(t, first.Result.Wrote)
	assert.Zero(t, first.Next.Disk.Garbage)
	assert.Zero(t, first.Next.Disk.Volatile)
	require.True(t, second.Result.Wrote)
	assert.Equal(t, uint8(1), second.Next.Disk.Garbage, "one replaced copy, one live: append")
	assert.Zero(t, second.Events&EvtCompact)
	assert.True(t, second.Next.Procs[0].Ents[0].CurIno)
	third := outs[len(outs)-1]
	require.True(t, third.Result.Wrote)
	assert.NotZero(t, third.Events&EvtCompact, "two replaced copies, one live: rewrite")
	assert.Zero(t, third.Next.Disk.Garbage)
	assert.False(t, third.Next.Procs[0].Ents[0].CurIno, "the rewrite is a new inode")
	assert.Equal(t, mkRec(1, 1), third.Next.Disk.Idx[0].Key())
	assert.Equal(t, third.Next.Procs[0].Ents[0].Rec.Copy(), third.Next.Disk.Idx[0].Copy(), "a compaction keeps the copy")

	// Without compaction the garbage saturates at its cap.
	nc := *ref(t)
	nc.NoCompaction = true
	outs = run(t, &nc, b, coldLaunch+"change-source name=w0\n"+relaunch+"upgrade-kernel\n"+relaunch)
	o := outs[len(outs)-1]
	assert.Zero(t, o.Events&EvtCompact)
	assert.Equal(t, uint8(2), o.Next.Disk.Garbage)
}

// A process still running an older source re-packs over the current
// packing: for everyone else that is an invalidation, so the programs
// packing that name owe no convergence any more (G3).
func TestOutdatedCommitUnsettlesPrograms(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, ref(t), b, launch("A", "P2", "w0")+`
change-source name=w0
restart proc=B
`+launch("B", "P1", "w0")+launch("A", "P1", "w0"))
	settled := outs[11]
	require.True(t, settled.Result.Wrote)
	assert.Equal(t, uint8(0b01), settled.Next.Env.Settled&0b01, "B's clean launch settles P1")
	o := outs[len(outs)-1]
	require.True(t, o.Result.Wrote)
	assert.Equal(t, mkRec(0, 0), o.Next.Disk.Idx[0].Key(), "A's packing of the old source")
	assert.Zero(t, o.Next.Env.Settled, "every program packing w0 owes nothing now")
}

// The design without an index commits nothing: its packings only turn
// committed in the instance, and the file is never written.
func TestNoIndexCommitWritesNothing(t *testing.T) {
	b := DefaultBounds()
	o := last(t, design(t, "pr19862-no-index"), b, coldLaunch)
	assert.False(t, o.Result.Wrote)
	assert.Zero(t, o.Events&EvtCommit)
	assert.Equal(t, spec.EntryCommitted, o.Next.Procs[0].Ents[0].Status)
	assert.Equal(t, DiskEmpty, o.Next.Disk.State)
	assert.False(t, o.Next.GhostValid)
	assert.Zero(t, o.Next.Disk.Lock)
}

// Without a commit point a crash inside the commit leaves no loadable
// index (mid-save), or a forged trailer that lists the appended packings
// over whatever bytes are there (forged): each a loss of G2.
func TestMidSaveBranchesWithoutACommitPoint(t *testing.T) {
	b := DefaultBounds()
	d := design(t, "no-commit-point")
	pre := coldLaunch + `
change-source name=w0
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
`
	o := last(t, d, b, pre+"crash kind=process proc=A branch=forged-trailer\n")
	assert.NotZero(t, o.Events&EvtMidSave)
	assert.Equal(t, DiskValid, o.Next.Disk.State)
	assert.Equal(t, mkRec(0, 1)|recCorrupt, o.Next.Disk.Idx[0].Content(), "the trailer names the appended packing, its bytes are not it")
	assert.Equal(t, uint8(1), o.Next.Disk.Garbage, "the appended packing is garbage once its process is gone")
	o = last(t, d, b, pre+"crash kind=process proc=A branch=mid-save\n")
	assert.Equal(t, DiskCorrupt, o.Next.Disk.State)
	o = last(t, d, b, pre+"crash kind=process proc=A branch=idle\n")
	assert.Equal(t, DiskValid, o.Next.Disk.State)
	assert.Equal(t, mkRec(0, 0), o.Next.Disk.Idx[0].Content(), "an idle crash leaves the last commit")
	assert.Zero(t, o.Events&EvtMidSave)
}

// Truncating in place cuts the mappings of the file now at the path, in
// every process that has one (I8); it keeps the lock word, and only a
// process that finds the lock free truncates.
func TestTruncateInPlaceCutsCurrentMappings(t *testing.T) {
	b := DefaultBounds()
	d := design(t, "truncate-in-place")
	o := last(t, d, b, coldLaunch+`
foreign kind=index
init proc=B program=P1
`)
	assert.NotZero(t, o.Events&EvtTruncate)
	assert.NotZero(t, o.Events&EvtLoadCorrupt)
	assert.Equal(t, spec.LoadRejected, o.Result.Load)
	assert.True(t, o.Next.Procs[0].Broken, "A mapped the truncated file")
	assert.False(t, o.Next.Procs[1].Broken, "B maps nothing")
	assert.Equal(t, Disk{}, o.Next.Disk)

	// A holds the lock (a launch with a reservation): B does not truncate.
	o = last(t, d, b, coldLaunch+`
change-source name=w0
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
foreign kind=index
init proc=B program=P1
`)
	assert.Zero(t, o.Events&EvtTruncate)
	assert.Equal(t, spec.LoadLocked, o.Result.Load, "the index is read under the shared lock")
	assert.False(t, o.Next.Procs[0].Broken)
}

// A foreign write that makes the index unreadable during a writer's
// session does not end the session: the writer's file is still the live
// one, and its commit lists what the instance knows is committed there
// (every name the instance holds, at the bounds' largest name count) with
// its appended packings, appended to the same file, not replaced (G7).
func TestCommitRelistsAfterForeignIndexWrite(t *testing.T) {
	b := DefaultBounds()
	b.Names = maxNames
	outs := run(t, ref(t), b, coldP1+`
change-source name=w1
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
lookup proc=A name=w1
reserve proc=A name=w1
foreign kind=index
insert proc=A name=w1
finalize proc=A
`)
	o := outs[len(outs)-1]
	require.True(t, o.Result.Wrote)
	assert.Zero(t, o.Events&(EvtReplace|EvtCompact), "the session's file is still the live one")
	assert.Equal(t, DiskValid, o.Next.Disk.State)
	assert.Equal(t, [maxNames]Rec{mkRec(0, 0), mkRec(0, 1), 0}, [maxNames]Rec{o.Next.Disk.Idx[0].Key(), o.Next.Disk.Idx[1].Key(), o.Next.Disk.Idx[2].Key()},
		"w0 relisted from the instance, w1 the new packing")
	assert.Equal(t, o.Next.Procs[0].Ents[0].Rec.Copy(), o.Next.Disk.Idx[0].Copy(), "the same copy")
	assert.True(t, o.Next.Procs[0].Ents[0].CurIno, "appending keeps the mappings current")
	assert.True(t, o.Next.GhostValid)
	assert.Equal(t, [maxNames]Rec{mkRec(0, 0), mkRec(0, 1), 0}, o.Next.Ghost)
}

// A compaction copies each committed packing from the file at the path,
// under the listed copy's label: bytes a foreign write changed there stay
// changed, even when the committer's mapping is of an older file that holds
// them intact. Copied from that mapping, the label would name two different
// byte strings, and an instance keeping its mapping of the changed ones at a
// refresh would miss in a launch owed convergence (I4; the explorer at two
// names, sim's scenario g3-compaction-copies-the-file-at-the-path).
func TestCompactionCopiesTheFileAtThePath(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	pre := coldP1 + `
unload proc=A program=P1
invalidate proc=A name=w1 branch=compact
foreign kind=data name=w0
init proc=A program=P1
lookup proc=A name=w0
lookup proc=A name=w1
reserve proc=A name=w1
insert proc=A name=w1
`
	outs := run(t, ref(t), b, pre+"finalize proc=A branch=compact\n")
	inv := outs[9]
	require.NotZero(t, inv.Events&EvtCompact)
	assert.False(t, inv.Next.Procs[0].Ents[0].CurIno, "A maps the file the compaction replaced")
	assert.Zero(t, outs[12].Next.Procs[0].Ents[0].Rec&recCorrupt, "A's mapping of the older file is intact")
	listed := outs[len(outs)-2].Next.Disk.Idx[0]
	o := outs[len(outs)-1]
	require.NotZero(t, o.Events&EvtCompact)
	assert.NotZero(t, o.Next.Disk.Idx[0]&recCorrupt, "copied from the file at the path, changed")
	assert.Equal(t, listed.Copy(), o.Next.Disk.Idx[0].Copy(), "the listed copy, carried")
	assert.Equal(t, mkRec(0, 0), o.Next.Disk.Idx[0].Key())

	o = last(t, ref(t), b, pre+"finalize proc=A\n")
	require.Zero(t, o.Events&EvtCompact)
	assert.NotZero(t, o.Next.Disk.Idx[0]&recCorrupt, "an append leaves the changed bytes in the file")

	// The same from a mapping the committer loaded (B), not packed.
	o = last(t, ref(t), b, coldP1+warmLaunch("B", "P1", "w0", "w1")+`
unload proc=A program=P1
invalidate proc=A name=w1 branch=compact
foreign kind=data name=w0
init proc=B program=P2
lookup proc=B name=w1
reserve proc=B name=w1
insert proc=B name=w1
finalize proc=B branch=compact
`)
	require.NotZero(t, o.Events&EvtCompact)
	assert.Equal(t, spec.EntryLoaded, o.Next.Procs[1].Ents[0].Status)
	assert.NotZero(t, o.Next.Disk.Idx[0]&recCorrupt, "copied from the file at the path, not B's mapping of the older file")
}

// Garbage is compared with the live packings: two replaced copies next to
// two live ones append (2 ≤ 2), four rewrite (I6).
func TestCompactionCountsLivePackings(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	relaunch := `
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
lookup proc=A name=w1
reserve proc=A name=%[1]s
insert proc=A name=%[1]s
finalize proc=A
`
	text := coldP1 + "change-source name=w0\n" + fmt.Sprintf(relaunch, "w0") + "change-source name=w1\n" + fmt.Sprintf(relaunch, "w1")
	o := last(t, ref(t), b, text)
	require.True(t, o.Result.Wrote)
	assert.Equal(t, 2, o.Next.Disk.Live())
	assert.Equal(t, uint8(2), o.Next.Disk.Garbage, "two replaced copies, two live: append")
	assert.Zero(t, o.Events&EvtCompact)
	o = last(t, ref(t), b, text+"upgrade-kernel\nrestart proc=A\n"+launch("A", "P1", "w0", "w1"))
	assert.NotZero(t, o.Events&EvtCompact, "four replaced copies, two live: rewrite")
}

// The relisted index names the bytes in the file at the path: when the
// committer's own mapping of a name is of an older file (compacted since)
// and holds it intact, a foreign write to the file's bytes still shows in
// the index it commits (G1 bookkeeping).
func TestRelistNamesTheFilesBytes(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	o := last(t, ref(t), b, coldP1+`
unload proc=A program=P1
invalidate proc=A name=w1 branch=compact
init proc=A program=P1
lookup proc=A name=w0
lookup proc=A name=w1
reserve proc=A name=w1
foreign kind=data name=w0
foreign kind=index
insert proc=A name=w1
finalize proc=A
`)
	require.True(t, o.Result.Wrote)
	require.Zero(t, o.Events&EvtReplace)
	require.False(t, o.Next.Procs[0].Ents[0].CurIno)
	assert.Zero(t, o.Next.Procs[0].Ents[0].Rec&recCorrupt, "A's mapping of the older file is intact")
	assert.NotZero(t, o.Next.Disk.Idx[0]&recCorrupt, "the file's bytes are not")
	assert.Equal(t, mkRec(0, 0), o.Next.Disk.Idx[0].Key())
}

// At the bounds' largest name count, where a loop one name too far reads
// past the arrays: a forged trailer lists the appended packing, and
// PR 19988's second init maps the instance's regions twice.
func TestHistoricalDesignsAtThreeNames(t *testing.T) {
	b := DefaultBounds()
	b.Names = maxNames
	o := last(t, design(t, "no-commit-point"), b, `
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
crash kind=process proc=A branch=forged-trailer
`)
	assert.Equal(t, DiskValid, o.Next.Disk.State)
	assert.Equal(t, mkRec(0, 0)|recCorrupt, o.Next.Disk.Idx[0].Content())
	o = last(t, design(t, "pr19988-cache-loaded-flag"), b, coldP1+`
init proc=A program=P2
`)
	assert.Equal(t, uint8(2), o.Next.Procs[0].Ents[0].Maps)
	assert.Equal(t, uint8(2), o.Next.Procs[0].Ents[1].Maps)
}
