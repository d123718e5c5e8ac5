package model

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// sameFutures reports the first way in which s and t (one state once dead
// fields are forgotten) step differently: every op must have as many
// outcomes from each, with the same ops, results, events, invariant
// verdicts, covers and liveness predicates, into states that are again
// one state once forgotten ("" when they do).
func sameFutures(c *Canon, d *Design, b Bounds, s, t State, checker *Checker) string {
	if Current(b, &s) != Current(b, &t) {
		return "Current differs"
	}
	covers := CoversFor(d)
	for _, op := range Alphabet(b) {
		a, o := Step(d, b, s, op), Step(d, b, t, op)
		if len(a) != len(o) {
			return fmt.Sprintf("%v: %d outcomes and %d", op, len(a), len(o))
		}
		for k := range a {
			ta, to := Transition{Prev: &s, Out: &a[k]}, Transition{Prev: &t, Out: &o[k]}
			switch {
			case !c.Same(a[k].Next, o[k].Next):
				return fmt.Sprintf("%v: next states differ\n%v\nand\n%v", op, a[k].Next, o[k].Next)
			case a[k].Op != o[k].Op:
				return fmt.Sprintf("%v: ops %v and %v", op, a[k].Op, o[k].Op)
			}
			if why := sameVerdicts(b, checker, covers, ta, to, true); why != "" {
				return fmt.Sprintf("%v: %s", op, why)
			}
		}
	}
	return ""
}

// Forgetting dead fields is a bisimulation on every design: a reached
// state and the state with its dead fields forgotten step alike, so the
// explorer may visit one for both (docs/model.md, "Dead fields"). The
// samples hold states in which each rule forgets something.
func TestCanonIsABisimulation(t *testing.T) {
	bounds := []Bounds{
		{Procs: 2, Names: 1, Programs: 2, Kernels: 2, Sources: 2, Foreign: true},
		{Procs: 2, Names: 2, Programs: 1, Kernels: 2, Sources: 2, Foreign: true},
		{Procs: 2, Names: 2, Programs: 2, Kernels: 2, Sources: 1, Foreign: true},
	}
	forgot := map[string]int{}
	for _, b := range bounds {
		for _, d := range Designs() {
			c := NewCanon(&d, b, b.Symmetries(), false)
			checker := NewChecker(b)
			for _, s := range sampleStates(&d, b, 6000, 16, 60, 3) {
				f := s
				c.Forget(&f)
				if f == s {
					continue
				}
				if s.Disk.Garbage != f.Disk.Garbage || s.Disk.Volatile != f.Disk.Volatile {
					forgot["garbage, no commit"]++
				}
				if s.Disk.Idx != f.Disk.Idx {
					forgot["unreadable index"]++
				}
				for p := range s.Procs {
					if s.Procs[p].Ents != f.Procs[p].Ents {
						forgot["hit or packed"]++
					}
					if s.Procs[p].LoadFlag != f.Procs[p].LoadFlag {
						forgot["LoadFlag"]++
					}
					if pr := &s.Procs[p]; pr.Clean != f.Procs[p].Clean {
						switch {
						case s.Env.Settled&(1<<pr.Prog) != 0:
							forgot["Clean, settled"]++
						case pr.Blocked:
							forgot["Clean, blocked"]++
						default:
							forgot["Clean, outdated"]++
						}
					}
				}
				if msg := sameFutures(&c, &d, b, s, f, checker); msg != "" {
					t.Fatalf("%s %+v at\n%v\nforgotten\n%v\n%s", d.Name, b, s, f, msg)
				}
			}
		}
	}
	for _, why := range []string{"LoadFlag", "Clean, settled", "Clean, blocked", "Clean, outdated", "garbage, no commit", "hit or packed", "unreadable index"} {
		require.Positive(t, forgot[why], "no sampled state forgets %s", why)
	}
}

// A design that reads the loaded flag keeps it; every design forgets a
// dead Clean; KeepDead forgets nothing.
func TestCanonForgetsOnlyWhatTheDesignDoesNotRead(t *testing.T) {
	b := ExhaustiveBounds()
	s := Init(b)
	s.Procs[0].LoadFlag = true
	s.Procs[0].Phase, s.Procs[0].Clean, s.Procs[0].Blocked = spec.PhasePacking, true, true
	for _, d := range Designs() {
		c := NewCanon(&d, b, b.Symmetries(), false)
		f := s
		c.Forget(&f)
		reads := d.LoadedRepacksToHeap || d.LockInitToDestroy || d.LoadedFlagOnlyOnLoad
		require.Equal(t, reads, f.Procs[0].LoadFlag, d.Name)
		require.False(t, f.Procs[0].Clean, d.Name)
		keep := NewCanon(&d, b, b.Symmetries(), true)
		require.False(t, keep.Same(s, f) && s != f, "%s: KeepDead tells them apart", d.Name)
		var e1, e2 Encoding
		require.Equal(t, c.Encode(&s, &e1), c.Encode(&f, &e2))
		require.Equal(t, e1, e2, d.Name)
	}
}

// Before the first commit a file's garbage is dead, except where a crash
// inside a commit can forge a loadable footer (NoCommitPoint): the forged
// index keeps the garbage counted before it, and the next commit compacts
// by it. Here B's crashed packing is garbage of a file with no commit, and
// A holds the lock with a packing appended.
func TestCanonKeepsGarbageAForgedFooterCarries(t *testing.T) {
	b := Bounds{Procs: 2, Names: 2, Programs: 1, Kernels: 1, Sources: 1}
	text := "init proc=B program=P1\nlookup proc=B name=w0\nreserve proc=B name=w0\ninsert proc=B name=w0\n" +
		"crash kind=process proc=B branch=idle\n" +
		"init proc=A program=P1\nlookup proc=A name=w0\nreserve proc=A name=w0\ninsert proc=A name=w0\n"
	forged := spec.Op{Kind: spec.EvCrash, Crash: spec.CrashProcess, Proc: 0, Branch: spec.BranchForged}
	for _, name := range []string{"no-commit-point", "reference"} {
		d := design(t, name)
		outs := run(t, d, b, text)
		s := outs[len(outs)-1].Next
		require.Equal(t, DiskEmpty, s.Disk.State)
		require.NotZero(t, s.Disk.Garbage)
		zeroed := s
		zeroed.Disk.Garbage, zeroed.Disk.Volatile = 0, 0
		c := NewCanon(d, b, b.Symmetries(), false)
		f := s
		c.Forget(&f)
		if !d.NoCommitPoint {
			require.Equal(t, zeroed, f, name)
			require.Empty(t, sameFutures(&c, d, b, s, zeroed, NewChecker(b)), name)
			continue
		}
		x, y := Step(d, b, s, forged), Step(d, b, zeroed, forged)
		require.Len(t, x, 1)
		require.Len(t, y, 1)
		require.Equal(t, DiskValid, x[0].Next.Disk.State)
		require.NotEqual(t, x[0].Next.Disk.Garbage, y[0].Next.Disk.Garbage, "the forged index carries the garbage")
		require.Equal(t, s, f, "%s: the canonical form keeps the garbage", name)
	}
}

// An unreadable index makes the garbage dead only when no writer holds
// the lock from before it broke: such a writer's commit appends to the
// file and counts the garbage (Proc.Replacing is false). Here A's
// invalidation left one packing of garbage, B took the lock for its
// re-pack, and then a foreign write broke the index.
func TestCanonKeepsGarbageASessionOnTheBrokenFileCounts(t *testing.T) {
	b := Bounds{Procs: 2, Names: 2, Programs: 1, Kernels: 1, Sources: 1, Foreign: true}
	d := ref(t)
	text := coldP1 + "unload proc=A program=P1\ninvalidate proc=A name=w0\n" +
		"init proc=B program=P1\nlookup proc=B name=w0\nreserve proc=B name=w0\nforeign kind=index\ninsert proc=B name=w0\n"
	outs := run(t, d, b, text)
	s := outs[len(outs)-1].Next
	require.Equal(t, DiskCorrupt, s.Disk.State)
	require.Equal(t, uint8(2), s.Disk.Lock)
	require.False(t, s.Procs[1].Replacing)
	require.NotZero(t, s.Disk.Garbage)
	c := NewCanon(d, b, b.Symmetries(), false)
	zeroed := s
	zeroed.Disk.Garbage, zeroed.Disk.Volatile = 0, 0
	finish := "lookup proc=B name=w1\nfinalize proc=B\n"
	require.NotEqual(t, stepAll(t, d, b, s, finish).Disk, stepAll(t, d, b, zeroed, finish).Disk, "B's commit counts the garbage")
	f := s
	c.Forget(&f)
	require.Equal(t, s.Disk, f.Disk, "the canonical form keeps the garbage")

	// Once B's session ends without a commit (B crashes), the next writer
	// replaces the file: the garbage is dead.
	outs = run(t, d, b, text+"crash kind=process proc=B branch=idle\n")
	s = outs[len(outs)-1].Next
	require.Equal(t, DiskCorrupt, s.Disk.State)
	require.NotZero(t, s.Disk.Garbage)
	zeroed = s
	zeroed.Disk.Garbage, zeroed.Disk.Volatile = 0, 0
	require.Empty(t, sameFutures(&c, d, b, s, zeroed, NewChecker(b)))
	f = s
	c.Forget(&f)
	require.Zero(t, f.Disk.Garbage)
}

// A design whose init takes the writer lock (LockInitToDestroy) takes it
// without replacing an unreadable file, so its commit counts the garbage
// even when nobody held the lock as the index broke.
func TestCanonKeepsGarbageAnInitLockCounts(t *testing.T) {
	b := Bounds{Procs: 2, Names: 2, Programs: 1, Kernels: 1, Sources: 1, Foreign: true}
	d := &Design{Name: "lock-init-to-destroy", LockInitToDestroy: true}
	outs := run(t, d, b, coldP1+"unload proc=A program=P1\ninvalidate proc=A name=w0\ndestroy proc=A\nforeign kind=index\n")
	s := outs[len(outs)-1].Next
	require.Equal(t, DiskCorrupt, s.Disk.State)
	require.Zero(t, s.Disk.Lock)
	require.NotZero(t, s.Disk.Garbage)
	c := NewCanon(d, b, b.Symmetries(), false)
	zeroed := s
	zeroed.Disk.Garbage, zeroed.Disk.Volatile = 0, 0
	launch := launch("B", "P1", "w0", "w1")
	require.NotEqual(t, stepAll(t, d, b, s, launch).Disk, stepAll(t, d, b, zeroed, launch).Disk, "B's init takes the lock and its commit counts the garbage")
	f := s
	c.Forget(&f)
	require.Equal(t, s.Disk, f.Disk, "the canonical form keeps the garbage")
}

// stepAll steps the ops of a scenario text from s, each with one outcome,
// and returns the state they reach.
func stepAll(t *testing.T, d *Design, b Bounds, s State, text string) State {
	t.Helper()
	ops, err := spec.ParseTrace(text)
	require.NoError(t, err)
	for _, op := range ops {
		o := Step(d, b, s, op)
		require.Len(t, o, 1, "%v", op)
		s = o[0].Next
	}
	return s
}
