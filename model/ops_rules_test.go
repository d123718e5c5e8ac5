package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// The operations' rules pinned one by one on the model alone: what an
// init loads and expects, what a look-up hands out, where a reservation
// goes and why, and what finalize, save, invalidate, unload and destroy
// leave behind. docs/mutation.md lists the mutants of step_ops.go these
// tests were shown failing on.

// A first init opens the file: every listed entry is mapped once, of the
// file at the path; the launch expects to hit only when its program is
// settled and it runs the current versions (G3).
func TestInitOpensAndExpects(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	outs := run(t, ref(t), b, coldP1+`
init proc=B program=P2
`)
	cold, fin, o := outs[0], outs[7], outs[len(outs)-1]
	assert.Equal(t, spec.PlaceFile, cold.Result.Place)
	assert.Equal(t, spec.LoadMissing, cold.Result.Load)
	assert.True(t, cold.Next.Procs[0].FileOn)
	assert.False(t, cold.Next.Procs[0].Expect, "nothing settled yet")
	assert.True(t, cold.Next.Procs[0].Clean)
	assert.Equal(t, uint8(0b01), fin.Next.Env.Settled)
	assert.Zero(t, fin.Events&EvtConverged, "the cold launch owed nothing")

	assert.Equal(t, spec.LoadOK, o.Result.Load)
	pb := o.Next.Procs[1]
	assert.Equal(t, spec.PhasePacking, pb.Phase)
	assert.Equal(t, spec.Program(1), pb.Prog)
	assert.Equal(t, uint8(0b10), pb.Loaded)
	assert.True(t, pb.LoadFlag)
	for n := 0; n < 2; n++ {
		e := pb.Ents[n]
		assert.Equal(t, spec.EntryLoaded, e.Status, "w%d", n)
		assert.Equal(t, uint8(1), e.Maps)
		assert.True(t, e.CurIno)
		assert.False(t, e.Verified, "loaded, not checked yet")
		assert.Zero(t, e.Hold)
	}
	assert.False(t, pb.Expect, "P2 has had no clean launch")
	assert.False(t, pb.NoFile || pb.Blocked || pb.HeapLaunch)

	// P1 is settled: B's launch of it must hit; after a source change of
	// a name it packs, or on a process still running the old version, not.
	o = last(t, ref(t), b, "init proc=B program=P2\nfinalize proc=B\n"[:0]+coldP1+`
init proc=B program=P1
`)
	assert.True(t, o.Next.Procs[1].Expect)
	o = last(t, ref(t), b, coldP1+`
upgrade-kernel
init proc=B program=P1
`)
	assert.False(t, o.Next.Procs[1].Expect, "the upgrade unsettled P1")
}

// Only the file's own loaded flag decides whether a design that keeps
// re-packs off a loaded file sends them to the heap, with a reason; a busy
// lock at init reads nothing and sends the whole launch to the heap (G8);
// no path sends it there with its own reason.
func TestReservationPlacesAndReasons(t *testing.T) {
	b := DefaultBounds()
	o := last(t, design(t, "repack-to-heap"), b, coldLaunch+`
change-source name=w0
restart proc=B
init proc=B program=P1
lookup proc=B name=w0
reserve proc=B name=w0
`)
	assert.Equal(t, spec.PlaceHeap, o.Result.Place)
	assert.Equal(t, spec.ReasonDesign, o.Result.Reason)
	assert.False(t, o.Next.Procs[1].Ents[0].Fallback, "a design's heap packing is no fallback")
	assert.Zero(t, o.Next.Disk.Lock)

	// The reference sends the same re-pack to the file.
	o = last(t, ref(t), b, coldLaunch+`
change-source name=w0
restart proc=B
init proc=B program=P1
lookup proc=B name=w0
reserve proc=B name=w0
`)
	assert.Equal(t, spec.PlaceFile, o.Result.Place)
	assert.Equal(t, uint8(2), o.Next.Disk.Lock)

	// A busy lock at init: the load is skipped and every reservation of the
	// launch goes to the heap without asking again.
	outs := run(t, ref(t), b, lockBusy+`
insert proc=B name=w0
`)
	initB := outs[3]
	assert.Equal(t, spec.LoadLocked, initB.Result.Load)
	pb := initB.Next.Procs[1]
	assert.True(t, pb.HeapLaunch && pb.Blocked)
	assert.False(t, pb.NoFile)
	assert.Zero(t, initB.Events&EvtLockBusy, "init asks for no lock")
	res := outs[5]
	assert.Equal(t, spec.ReasonLockBusy, res.Result.Reason)
	assert.Zero(t, res.Events&EvtLockBusy, "the launch does not ask again")
	assert.True(t, res.Next.Procs[1].Ents[0].Fallback)
	ins := outs[6].Next.Procs[1].Ents[0]
	assert.Equal(t, spec.EntryHeap, ins.Status)
	assert.True(t, ins.Fallback)
	assert.Zero(t, ins.Maps)
	assert.False(t, ins.CurIno)

	// Opted out of the file: no path.
	outs = run(t, design(t, "borrowed-options"), b, `
clobber-options proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
`)
	assert.False(t, outs[0].Next.Procs[0].OptCaller)
	assert.Equal(t, spec.PlaceHeap, outs[1].Result.Place, "the borrowed map says no path")
	assert.True(t, outs[1].Next.Procs[0].NoFile)
	assert.False(t, outs[1].Next.Procs[0].FileOn)
	assert.Equal(t, spec.ReasonNoPath, outs[3].Result.Reason)
	assert.True(t, outs[3].Next.Procs[0].Ents[0].Fallback)
	o = last(t, ref(t), b, "clobber-options proc=A\ninit proc=A program=P1\n")
	assert.Equal(t, spec.PlaceFile, o.Result.Place, "the reference copied its options")
	assert.True(t, o.Next.Procs[0].OptCaller, "clobbering changes nothing the reference reads")
}

// A look-up hits only a present, current, unretired packing of the
// process's versions; the first use checks it, and a corrupt one is
// dropped and re-packed (G1). A hit on a heap fallback, or on bytes
// changed after the check, does not make the launch clean (G3).
func TestLookUpRules(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, ref(t), b, coldLaunch+warmLaunch("B", "P1", "w0")+`
init proc=B program=P2
lookup proc=B name=w0
`)
	hit := outs[6]
	assert.True(t, hit.Result.Hit && hit.Result.Checked)
	assert.NotZero(t, hit.Events&EvtWarmHit)
	e := hit.Next.Procs[1].Ents[0]
	assert.True(t, e.Verified)
	assert.Equal(t, uint8(0b01), e.Hold)
	assert.Equal(t, stepHit, e.Step)
	again := outs[len(outs)-1]
	assert.True(t, again.Result.Hit)
	assert.False(t, again.Result.Checked, "checked once")
	assert.Equal(t, uint8(0b11), again.Next.Procs[1].Ents[0].Hold)

	// Corrupt bytes: caught, dropped from the view, tombstoned.
	o := last(t, ref(t), b, coldLaunch+"foreign kind=data name=w0\ninit proc=B program=P1\nlookup proc=B name=w0\n")
	assert.False(t, o.Result.Hit)
	assert.True(t, o.Result.Checked)
	assert.NotZero(t, o.Events&EvtCorruptCaught)
	assert.Equal(t, Entry{Step: stepMissed}, o.Next.Procs[1].Ents[0])
	assert.True(t, o.Next.Procs[1].Tomb[0].Present())
	assert.Zero(t, o.Events&EvtStaleMiss)

	// Checked before a foreign write: the hit is late, not clean.
	o = last(t, ref(t), b, coldLaunch+"foreign kind=data name=w0\ninit proc=A program=P2\nlookup proc=A name=w0\n")
	assert.True(t, o.Result.Hit)
	assert.True(t, o.Result.Bytes.LateCorrupt)
	assert.False(t, o.Next.Procs[0].Clean)
	assert.Zero(t, o.Events&EvtWarmHit, "A's own packing, not loaded")

	// A heap fallback hit blocks the launch's convergence.
	o = last(t, ref(t), b, lockBusy+`
insert proc=B name=w0
finalize proc=B
init proc=B program=P2
lookup proc=B name=w0
`)
	assert.True(t, o.Result.Hit)
	assert.True(t, o.Next.Procs[1].Blocked)
	assert.Zero(t, o.Events&EvtFallbackMiss)

	// With the lock free, a launch of another program misses that heap
	// packing and re-packs to the file: the packing lives on for P1,
	// retired from the index (docs/bugs.md, "A fall-back heap packing
	// kept out of the file"). A design whose look-up finds every packing
	// (FallbackHits, ExecuTorch's) hits it.
	free := lockBusy + `
insert proc=B name=w0
finalize proc=B
crash kind=process proc=A branch=idle
init proc=B program=P2
lookup proc=B name=w0
`
	outs = run(t, ref(t), b, free+"reserve proc=B name=w0\n")
	o = outs[len(outs)-2]
	assert.False(t, o.Result.Hit)
	assert.NotZero(t, o.Events&EvtFallbackMiss)
	assert.Zero(t, o.Events&EvtStaleMiss)
	e = o.Next.Procs[1].Ents[0]
	assert.True(t, e.Retired && e.Fallback)
	assert.Equal(t, uint8(0b01), e.Hold, "still P1's")
	assert.Equal(t, stepMissed, e.Step)
	assert.False(t, o.Next.Procs[1].Blocked)
	assert.Equal(t, spec.PlaceFile, outs[len(outs)-1].Result.Place)
	fh := *ref(t)
	fh.FallbackHits = true
	o = last(t, &fh, b, free)
	assert.True(t, o.Result.Hit)
	assert.Zero(t, o.Events&EvtFallbackMiss)
	assert.True(t, o.Next.Procs[1].Blocked)

	// Stale: a miss that says so; on-compute hands the handle unchecked.
	o = last(t, ref(t), b, coldLaunch+"upgrade-kernel\nrestart proc=B\ninit proc=B program=P1\nlookup proc=B name=w0\n")
	assert.False(t, o.Result.Hit)
	assert.NotZero(t, o.Events&EvtStaleMiss)
	assert.Equal(t, stepMissed, o.Next.Procs[1].Ents[0].Step)
	o = last(t, design(t, "on-compute"), b, coldLaunch+"init proc=B program=P1\nlookup proc=B name=w0\n")
	assert.True(t, o.Result.Hit)
	assert.False(t, o.Result.Checked)
	assert.NotZero(t, o.Events&EvtUncheckedHandle)
	assert.False(t, o.Next.Procs[1].Ents[0].Verified)
	o = last(t, ref(t), b, coldLaunch+"init proc=B program=P1\nlookup proc=B name=w0\n")
	assert.Zero(t, o.Events&EvtUncheckedHandle)
}

// Finalize needs every name of the program looked up to a hit or an
// insert; it releases the lock, settles a clean launch of the current
// versions, and leaves the instance idle with no launch state.
func TestFinalizeRules(t *testing.T) {
	b := DefaultBounds()
	d := ref(t)
	s := Init(b)
	for _, line := range []string{"init proc=A program=P1", "lookup proc=A name=w0", "reserve proc=A name=w0"} {
		s = Step(d, b, s, mustOp(t, line))[0].Next
	}
	assert.Empty(t, Step(d, b, s, mustOp(t, "finalize proc=A")), "w0 reserved, not inserted")
	assert.Empty(t, Step(d, b, s, mustOp(t, "save proc=A")), "no commit between a reservation and its insert")
	s = Step(d, b, s, mustOp(t, "insert proc=A name=w0"))[0].Next
	assert.Empty(t, Step(d, b, s, mustOp(t, "finalize proc=B")), "B is not packing")
	outs := Step(d, b, s, mustOp(t, "finalize proc=A"))
	require.Len(t, outs, 1)
	pa := outs[0].Next.Procs[0]
	assert.Equal(t, spec.PhaseIdle, pa.Phase)
	assert.Equal(t, spec.Program(0), pa.Prog)
	assert.False(t, pa.Expect || pa.Blocked || pa.Clean || pa.NoFile || pa.HeapLaunch || pa.Replacing)
	assert.Equal(t, stepNone, pa.Ents[0].Step)
	assert.Equal(t, spec.PlaceNone, pa.Ents[0].Place)
	assert.Zero(t, outs[0].Next.Disk.Lock)
	assert.Equal(t, uint8(0b01), outs[0].Next.Env.Settled)

	// A launch blocked by a busy lock settles nothing.
	o := last(t, d, b, `
init proc=A program=P1
init proc=B program=P2
lookup proc=A name=w0
reserve proc=A name=w0
lookup proc=B name=w0
reserve proc=B name=w0
insert proc=B name=w0
finalize proc=B
`)
	assert.Zero(t, o.Next.Env.Settled)
	assert.Equal(t, uint8(1), o.Next.Disk.Lock, "B's finalize leaves A's lock")
	assert.False(t, o.Result.Wrote)
}

// Invalidate is an idle operation on an entry no program holds; unload
// frees heap and retired entries with their last holder and keeps mapped
// ones (G4); destroy keeps only the process's versions and options.
func TestInvalidateUnloadDestroy(t *testing.T) {
	b := DefaultBounds()
	d := ref(t)
	s := run(t, d, b, coldLaunch)[4].Next
	assert.Empty(t, Step(d, b, s, mustOp(t, "invalidate proc=A name=w0")), "held by P1")
	assert.Empty(t, Step(d, b, s, mustOp(t, "unload proc=A program=P2")), "P2 is not loaded")
	u := Step(d, b, s, mustOp(t, "unload proc=A program=P1"))
	require.Len(t, u, 1)
	e := u[0].Next.Procs[0].Ents[0]
	assert.Equal(t, spec.EntryCommitted, e.Status, "a mapped entry stays")
	assert.Zero(t, e.Hold)
	assert.Zero(t, u[0].Next.Procs[0].Loaded)
	assert.Empty(t, Step(d, b, Init(b), mustOp(t, "invalidate proc=A name=w0")), "nothing to invalidate")

	// A heap entry goes with its last holder.
	o := last(t, d, b, lockBusy+`
insert proc=B name=w0
finalize proc=B
unload proc=B program=P1
`)
	assert.Equal(t, Entry{}, o.Next.Procs[1].Ents[0])

	// Destroy.
	o = last(t, design(t, "borrowed-options"), b, coldLaunch+"clobber-options proc=A\ndestroy proc=A\n")
	pa := o.Next.Procs[0]
	assert.Equal(t, Proc{OptModule: true}, pa, "only the versions and options stay")
	assert.Empty(t, Step(d, b, s, mustOp(t, "destroy proc=B")), "B has no instance")
}

// A process still running an older source of a name its program packs
// owes no convergence, even once another process settled the program
// again (G3), at the bounds' largest name count.
func TestOldSourceExpectsNothing(t *testing.T) {
	b := DefaultBounds()
	b.Names = maxNames
	outs := run(t, ref(t), b, coldP1+`
change-source name=w0
restart proc=B
init proc=B program=P1
lookup proc=B name=w0
reserve proc=B name=w0
insert proc=B name=w0
lookup proc=B name=w1
finalize proc=B
unload proc=A program=P1
init proc=A program=P1
`)
	require.Equal(t, uint8(0b01), outs[len(outs)-3].Next.Env.Settled, "B settled P1 again")
	o := outs[len(outs)-1]
	assert.Equal(t, uint8(0), o.Next.Procs[0].Src[0])
	assert.False(t, o.Next.Procs[0].Expect, "A runs the old source of w0")
	assert.True(t, last(t, ref(t), b, "init proc=B program=P1\n"[:0]+coldP1+`
unload proc=A program=P1
init proc=A program=P1
`).Next.Procs[0].Expect, "the same process, current, must hit")
}

// A refresh retires what the file no longer lists if a program holds it
// (it stays usable, outside the index) and drops it otherwise; it keeps a
// dropped packing out of the view while the file still lists that copy
// (the drop is pending); it replaces heap packings by the file's (G3).
func TestRefreshRules(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	two := coldP1 + warmLaunch("B", "P1", "w0", "w1")
	dropW0 := "unload proc=A program=P1\ninvalidate proc=A name=w0\n"
	o := last(t, ref(t), b, two+dropW0+"init proc=B program=P2\n")
	e := o.Next.Procs[1].Ents[0]
	assert.True(t, e.Retired, "held by P1: retired, not dropped")
	assert.Equal(t, uint8(0b01), e.Hold)
	o = last(t, ref(t), b, two+dropW0+"unload proc=B program=P1\ninit proc=B program=P2\n")
	assert.Equal(t, Entry{}, o.Next.Procs[1].Ents[0], "held by nobody: dropped")

	// B's drop of w0 is pending (A holds the lock); A commits w1 only; B's
	// next init keeps w0 out of its view, since the file still lists the
	// copy B dropped.
	outs := run(t, ref(t), b, two+`
unload proc=B program=P1
change-source name=w1
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
lookup proc=A name=w1
reserve proc=A name=w1
invalidate proc=B name=w0
insert proc=A name=w1
finalize proc=A
init proc=B program=P1
lookup proc=B name=w0
`)
	initB, look := outs[len(outs)-2], outs[len(outs)-1]
	require.True(t, outs[len(outs)-5].Result.Failed, "the invalidation is pending")
	assert.True(t, initB.Next.Procs[1].Tomb[0].Present())
	assert.False(t, initB.Next.Procs[1].Ents[0].Rec.Present(), "not mapped again")
	assert.False(t, look.Result.Hit)

	// A heap packing is replaced by the file's once the file lists one.
	o = last(t, ref(t), b, `
init proc=A program=P1
init proc=B program=P2
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
lookup proc=A name=w1
reserve proc=A name=w1
lookup proc=B name=w1
reserve proc=B name=w1
insert proc=B name=w1
finalize proc=B
insert proc=A name=w1
finalize proc=A
init proc=B program=P1
`)
	require.Equal(t, spec.EntryHeap, run(t, ref(t), b, `
init proc=A program=P1
init proc=B program=P2
lookup proc=A name=w0
reserve proc=A name=w0
lookup proc=B name=w1
reserve proc=B name=w1
insert proc=B name=w1
`)[6].Next.Procs[1].Ents[1].Status)
	assert.Equal(t, spec.EntryLoaded, o.Next.Procs[1].Ents[1].Status)
	assert.NotZero(t, o.Events&EvtRefresh)
}

// PR 19988: after a fresh write the loaded flag is still unset, so the next
// init loads the file again and maps the instance's own committed regions
// twice (I7); the reference maps them once.
func TestLoadedFlagOnlyOnLoadMapsTwice(t *testing.T) {
	b := DefaultBounds()
	o := last(t, design(t, "pr19988-cache-loaded-flag"), b, coldLaunch+"init proc=A program=P2\n")
	assert.Equal(t, uint8(2), o.Next.Procs[0].Ents[0].Maps)
	assert.True(t, o.Next.Procs[0].LoadFlag)
	o = last(t, ref(t), b, coldLaunch+"init proc=A program=P2\n")
	assert.Equal(t, uint8(1), o.Next.Procs[0].Ents[0].Maps)
	// Only a load that found the file: with the index unreadable, nothing.
	o = last(t, design(t, "pr19988-cache-loaded-flag"), b, coldLaunch+"foreign kind=index\ninit proc=A program=P2\n")
	assert.Equal(t, uint8(1), o.Next.Procs[0].Ents[0].Maps)
	assert.False(t, o.Next.Procs[0].LoadFlag)
}

// A hit served from a mapping of a file no longer at the path keeps the
// launch clean only while the file now there lists the same copy intact:
// otherwise the next launch loads what this one did not see (G3).
func TestHitFromOlderFileIsCleanOnlyIfTheFileAgrees(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	pre := coldP1 + warmLaunch("B", "P1", "w0", "w1") + `
unload proc=B program=P1
unload proc=A program=P1
invalidate proc=A name=w1 branch=compact
`
	for _, p := range []string{"A", "B"} {
		relaunch := "init proc=" + p + " program=P1\nlookup proc=" + p + " name=w0\n"
		q := 0
		if p == "B" {
			q = 1
		}
		o := last(t, ref(t), b, pre+relaunch)
		require.True(t, o.Result.Hit, p)
		require.False(t, o.Next.Procs[q].Ents[0].CurIno, "%s maps the compacted-away file", p)
		assert.True(t, o.Next.Procs[q].Clean, "%s: the file lists the same copy intact", p)
		o = last(t, ref(t), b, pre+"foreign kind=data name=w0\n"+relaunch)
		require.True(t, o.Result.Hit, p)
		assert.True(t, o.Result.Bytes.Intact, "%s's mapping of the older file is intact", p)
		assert.False(t, o.Next.Procs[q].Clean, "%s: the file at the path holds changed bytes", p)
	}
}

// arrivedMeanwhile has A and B both miss w0, then A pack and commit it
// before B reserves, inserts and finalizes the same packing.
const arrivedMeanwhile = `
init proc=A program=P1
init proc=B program=P1
lookup proc=A name=w0
lookup proc=B name=w0
reserve proc=A name=w0
insert proc=A name=w0
finalize proc=A
reserve proc=B name=w0
insert proc=B name=w0
finalize proc=B
`

// The same packing arrived meanwhile: B's reservation re-read A's commit
// of the packing B was about to insert, so B keeps A's copy (the bytes
// compare equal) and its reserved space is garbage, not yet durable (G4).
// Two reservations of one launch both go to the file under the lock the
// first one took.
func TestInsertOfAPackingThatArrivedMeanwhile(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, ref(t), b, arrivedMeanwhile)
	ins := outs[len(outs)-2]
	e := ins.Next.Procs[1].Ents[0]
	assert.Equal(t, spec.EntryLoaded, e.Status, "A's copy, loaded")
	assert.Equal(t, ins.Next.Disk.Idx[0].Copy(), e.Rec.Copy())
	assert.True(t, e.Verified)
	assert.Equal(t, uint8(0b01), e.Hold)
	assert.Equal(t, stepDone, e.Step)
	assert.False(t, e.Fallback)
	assert.Equal(t, uint8(1), ins.Next.Disk.Garbage, "the reservation is garbage")
	assert.Equal(t, uint8(1), ins.Next.Disk.Volatile, "and not durable")
	fin := outs[len(outs)-1]
	assert.False(t, fin.Result.Wrote, "nothing new to commit (G4)")
	assert.Zero(t, fin.Next.Disk.Lock)

	b.Names = 2
	outs = run(t, ref(t), b, `
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
lookup proc=A name=w1
reserve proc=A name=w1
`)
	for _, o := range outs[2:] {
		if o.Op.Kind == spec.OpReserve {
			assert.Equal(t, spec.PlaceFile, o.Result.Place, o.Op.String())
			assert.Equal(t, spec.ReasonNone, o.Result.Reason, o.Op.String())
		}
	}
}
