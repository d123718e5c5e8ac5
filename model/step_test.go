package model

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

func ref(t testing.TB) *Design {
	d, err := DesignByName("reference")
	require.NoError(t, err)
	return &d
}

func design(t testing.TB, name string) *Design {
	d, err := DesignByName(name)
	require.NoError(t, err)
	return &d
}

// run replays a scenario text and returns its outcomes.
func run(t *testing.T, d *Design, b Bounds, text string) []Outcome {
	t.Helper()
	ops, err := spec.ParseTrace(text)
	require.NoError(t, err)
	outs, err := Replay(d, b, ops)
	require.NoError(t, err)
	return outs
}

// coldLaunch is A's first launch of P1: it packs w0 into the file and
// commits it.
var coldLaunch = launch("A", "P1", "w0")

// packs is the scenario text of proc looking up, reserving and inserting
// each name in turn.
func packs(proc string, names ...string) string {
	var s strings.Builder
	for _, n := range names {
		for _, op := range []string{"lookup", "reserve", "insert"} {
			s.WriteString(op + " proc=" + proc + " name=" + n + "\n")
		}
	}
	return s.String()
}

// launch is proc's launch of program that packs names: init, packs, finalize.
func launch(proc, program string, names ...string) string {
	return "init proc=" + proc + " program=" + program + "\n" + packs(proc, names...) + "finalize proc=" + proc + "\n"
}

// warmLaunch is proc's launch of program that only looks names up: the
// launch that hits them all once they are in the file.
func warmLaunch(proc, program string, names ...string) string {
	var s strings.Builder
	s.WriteString("init proc=" + proc + " program=" + program + "\n")
	for _, n := range names {
		s.WriteString("lookup proc=" + proc + " name=" + n + "\n")
	}
	return s.String() + "finalize proc=" + proc + "\n"
}

// coldP1 is A's cold launch of P1, which packs w0 and w1 at two names or
// more.
var coldP1 = launch("A", "P1", "w0", "w1")

// lockBusy has A reserve w0 in the file, taking the writer lock, then B
// reserve w0 too: B's reservation falls back to the heap.
const lockBusy = `
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
init proc=B program=P1
lookup proc=B name=w0
reserve proc=B name=w0
`

func TestColdThenWarmLaunch(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, ref(t), b, coldLaunch+`
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
finalize proc=A
`)
	assert.Equal(t, spec.LoadMissing, outs[0].Result.Load)
	assert.False(t, outs[1].Result.Hit)
	assert.Equal(t, spec.PlaceFile, outs[2].Result.Place)
	assert.True(t, outs[4].Result.Wrote, "the cold launch commits (G2)")
	assert.Equal(t, spec.LoadOK, outs[6].Result.Load)
	assert.True(t, outs[7].Result.Hit, "the warm launch hits (G3)")
	assert.True(t, outs[7].Result.Checked, "first use verifies the data (G1)")
	assert.Equal(t, spec.Packing{Intact: true}, outs[7].Result.Bytes)
	assert.NotZero(t, outs[7].Events&EvtWarmHit)
	assert.False(t, outs[8].Result.Wrote, "nothing new, nothing written (G4)")
	assert.NotZero(t, outs[8].Events&EvtConverged)
	prev := Init(b)
	for _, o := range outs {
		assert.Empty(t, Check(b, Transition{Prev: &prev, Out: &o}), o.Op.String())
		prev = o.Next
	}
}

func TestUpgradeMissesInReferenceHitsInV1(t *testing.T) {
	b := DefaultBounds()
	scenario := coldLaunch + `
upgrade-kernel
restart proc=B
init proc=B program=P1
lookup proc=B name=w0
`
	outs := run(t, ref(t), b, scenario)
	last := outs[len(outs)-1]
	assert.False(t, last.Result.Hit)
	assert.NotZero(t, last.Events&EvtStaleMiss)

	outs = run(t, design(t, "v1-no-seed"), b, scenario)
	prev := outs[len(outs)-2].Next
	last = outs[len(outs)-1]
	assert.True(t, last.Result.Hit)
	assert.Equal(t, uint8(0), last.Result.Bytes.Kernel, "the old layout is served")
	assert.Equal(t, []spec.InvariantID{spec.InvNoStaleHit}, Check(b, Transition{Prev: &prev, Out: &last}))
}

func TestLockBusyFallsBackToHeap(t *testing.T) {
	outs := run(t, ref(t), DefaultBounds(), lockBusy)
	r := outs[len(outs)-1].Result
	assert.Equal(t, spec.PlaceHeap, r.Place)
	assert.Equal(t, spec.ReasonLockBusy, r.Reason)
	assert.False(t, r.Failed, "G8: a reason, not an error")
}

func TestCrashBranches(t *testing.T) {
	b := DefaultBounds()
	ops, err := spec.ParseTrace(`
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
`)
	require.NoError(t, err)
	for _, c := range []struct {
		design string
		want   []spec.Branch
	}{
		{"reference", []spec.Branch{spec.BranchIdle, spec.BranchMidSave}},
		{"no-commit-point", []spec.Branch{spec.BranchIdle, spec.BranchMidSave, spec.BranchForged}},
	} {
		d := design(t, c.design)
		outs, err := Replay(d, b, ops)
		require.NoError(t, err)
		s := outs[len(outs)-1].Next
		for _, crash := range []spec.Op{
			{Kind: spec.EvCrash, Crash: spec.CrashProcess, Proc: 0},
			{Kind: spec.EvCrash, Crash: spec.CrashPower},
		} {
			got := Step(d, b, s, crash)
			var branches []spec.Branch
			for _, o := range got {
				branches = append(branches, o.Op.Branch)
				assert.Equal(t, uint8(0), o.Next.Disk.Lock, "flock dies with the process")
				if crash.Crash == spec.CrashProcess {
					assert.Equal(t, uint8(1), o.Next.Disk.Garbage, "the appended packing is garbage")
					assert.Equal(t, uint8(1), o.Next.Disk.Volatile, "not durable yet")
				} else {
					assert.Zero(t, o.Next.Disk.Garbage, "a power loss may take back space never made durable")
				}
				one := crash
				one.Branch = o.Op.Branch
				assert.Equal(t, []Outcome{o}, Step(d, b, s, one), "a named branch replays alone")
			}
			assert.Equal(t, c.want, branches, "%s %s", c.design, crash)
		}
		// B holds nothing: its crash has only the idle branch.
		s.Procs[1].Phase = spec.PhaseIdle
		got := Step(d, b, s, spec.Op{Kind: spec.EvCrash, Crash: spec.CrashProcess, Proc: 1})
		require.Len(t, got, 1)
		assert.Equal(t, s.Disk, got[0].Next.Disk)
	}
}

func TestMidSaveKeepsPreviousCommitOnlyWithACommitPoint(t *testing.T) {
	b := DefaultBounds()
	scenario := coldLaunch + `
change-source name=w0
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
crash kind=process proc=A branch=mid-save
`
	outs := run(t, ref(t), b, scenario)
	end := outs[len(outs)-1].Next
	assert.Equal(t, DiskValid, end.Disk.State)
	var keys [maxNames]Rec
	for n, r := range end.Disk.Idx {
		keys[n] = r.Key()
	}
	assert.Equal(t, end.Ghost, keys, "G2: the previous commit is what loads")

	outs = run(t, design(t, "no-commit-point"), b, scenario)
	last := outs[len(outs)-1]
	prev := outs[len(outs)-2].Next
	assert.Equal(t, DiskCorrupt, last.Next.Disk.State)
	assert.Contains(t, Check(b, Transition{Prev: &prev, Out: &last}), spec.InvCommitSurvives)
}

func TestStepIsPureAndDeterministic(t *testing.T) {
	b := DefaultBounds()
	alphabet := Alphabet(b)
	for _, d := range Designs() {
		rng := rand.New(rand.NewPCG(1, uint64(len(d.Name))))
		s := Init(b)
		for i := 0; i < 400; i++ {
			var all []Outcome
			for _, op := range alphabet {
				// == and slices.Equal, not testify's reflection: 160,000
				// steps, and Outcome is a comparable value.
				before := s
				a := Step(&d, b, s, op)
				c := Step(&d, b, s, op)
				if before != s {
					t.Fatalf("Step changed its input: %s", op)
				}
				if !slices.Equal(a, c) {
					t.Fatalf("Step is not deterministic for %s", op)
				}
				for _, o := range a {
					if o.Op.Kind != op.Kind || (op.Kind != spec.EvCrash && o.Op != op) {
						t.Fatalf("%s stepped as %s", op, o.Op)
					}
				}
				all = append(all, a...)
			}
			require.NotEmpty(t, all, "%s: a state with no successor", d.Name)
			s = all[rng.IntN(len(all))].Next
		}
	}
}

func TestOpsOutsideBoundsAreDisabled(t *testing.T) {
	b := Bounds{Procs: 1, Names: 1, Programs: 1, Kernels: 1, Sources: 1, Depth: 1}
	s := Init(b)
	d := ref(t)
	assert.Empty(t, Step(d, b, s, spec.Op{Kind: spec.OpInit, Proc: 1}))
	assert.Empty(t, Step(d, b, s, spec.Op{Kind: spec.OpInit, Program: 1}))
	assert.Empty(t, Step(d, b, s, spec.Op{Kind: spec.EvKernelUpgrade}), "one kernel version: no upgrade")
	assert.Empty(t, Step(d, b, s, spec.Op{Kind: spec.EvForeign, Foreign: spec.ForeignIndex}))
	assert.Empty(t, Step(d, b, s, spec.Op{Kind: spec.EvCrash}), "a crash needs a kind")
	assert.Len(t, Step(d, b, s, spec.Op{Kind: spec.OpInit}), 1)
	for _, op := range Alphabet(b) {
		assert.Less(t, int(op.Proc), b.Procs)
		assert.Less(t, int(op.Name), b.Names)
	}
}

func TestBoundsValidate(t *testing.T) {
	require.NoError(t, DefaultBounds().Validate())
	for _, b := range []Bounds{
		{Procs: 0, Names: 1, Programs: 1, Kernels: 1, Sources: 1},
		{Procs: 3, Names: 1, Programs: 1, Kernels: 1, Sources: 1},
		{Procs: 1, Names: 4, Programs: 1, Kernels: 1, Sources: 1},
		{Procs: 1, Names: 1, Programs: 3, Kernels: 1, Sources: 1},
		{Procs: 1, Names: 1, Programs: 1, Kernels: 3, Sources: 1},
		{Procs: 1, Names: 1, Programs: 1, Kernels: 1, Sources: 0},
		{Procs: 1, Names: 1, Programs: 1, Kernels: 1, Sources: 1, Depth: -1},
	} {
		assert.ErrorIs(t, b.Validate(), ErrBounds, "%+v", b)
	}
}

func TestReplayErrors(t *testing.T) {
	b := DefaultBounds()
	_, err := Replay(ref(t), b, []spec.Op{{Kind: spec.OpLookUp}})
	var re *ReplayError
	require.ErrorAs(t, err, &re)
	assert.True(t, errors.Is(err, ErrNotEnabled))
	assert.Equal(t, 0, re.Outcomes)

	ops, err := spec.ParseTrace(coldLaunch[:len(coldLaunch)-len("finalize proc=A\n")] + "crash kind=power\n")
	require.NoError(t, err)
	_, err = Replay(ref(t), b, ops)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 2, re.Outcomes, "a crash with several branches must name one")

	_, err = Replay(ref(t), Bounds{}, nil)
	assert.ErrorIs(t, err, ErrBounds)
}

func TestDesignTable(t *testing.T) {
	seen := map[string]bool{}
	for i, d := range Designs() {
		assert.False(t, seen[d.Name])
		seen[d.Name] = true
		assert.NotEmpty(t, d.Source)
		assert.NotEmpty(t, d.Summary)
		if i == 0 {
			assert.Equal(t, "reference", d.Name)
			assert.Empty(t, d.Expect)
			continue
		}
		if len(d.Expect) == 0 {
			// The only other clean design is the reference under the
			// on-compute policy.
			assert.Equal(t, Design{Name: d.Name, Source: d.Source, Summary: d.Summary, CheckAtCompute: true}, d)
			continue
		}
		for _, inv := range d.Expect {
			_, ok := spec.InvariantByID(inv)
			assert.True(t, ok, "%s expects unknown %s", d.Name, inv)
		}
	}
	assert.Len(t, seen, 11)
	_, err := DesignByName("nope")
	assert.ErrorIs(t, err, ErrUnknownDesign)
}

// An outdated process (started before the upgrade) merges the current
// packing when it takes the lock, drops it (it does not match its key) and
// commits its own: the next current launch misses. That is an invalidation
// (one packing per name), so no launch may owe convergence after it. Found
// by the explorer at 2 names, depth 15, before commits compared against the
// index they started from.
func TestBugOutdatedCommitClearsConvergence(t *testing.T) {
	b := DefaultBounds()
	b.Names = 2
	outs := run(t, ref(t), b, `
init proc=A program=P1
lookup proc=A name=w1
upgrade-kernel
crash kind=process proc=B branch=idle
init proc=B program=P2
lookup proc=B name=w1
reserve proc=B name=w1
insert proc=B name=w1
finalize proc=B
reserve proc=A name=w1
insert proc=A name=w1
save proc=A
crash kind=process proc=A branch=idle
init proc=A program=P2
lookup proc=A name=w1
`)
	prev := Init(b)
	for _, o := range outs {
		assert.Empty(t, Check(b, Transition{Prev: &prev, Out: &o}), o.Op.String())
		prev = o.Next
	}
	assert.Zero(t, outs[11].Next.Env.Settled&(1<<1), "A's commit dropped B's current packing of w1")
	last := outs[len(outs)-1]
	assert.False(t, last.Result.Hit, "the current packing is gone: a miss, but not one owed")
}
