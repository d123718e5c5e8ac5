package explore

import (
	"bytes"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// notShort is why a test skips itself under -short: -short is the run
// each mutant of the mutation tests gets (docs/mutation.md), and it keeps
// the behavioural tests that hold the explorer to an oracle (oracle_test.go,
// oracle_liveness_test.go, the fingerprint mode against the search in
// memory) and the lassos; these repeat them at larger bounds or on more
// designs. Plain go test runs everything.
const notShort = "larger bounds or more designs than the oracle tests: not in -short"

// The reference design (and the reference under the on-compute policy)
// breaks no invariant within the default bounds, and
// reaches every cover: a model that could not commit, hit or compact would
// fail here instead of passing vacuously.
func TestReferenceIsCleanAndCovered(t *testing.T) {
	if testing.Short() {
		t.Skip(notShort)
	}
	for _, d := range model.Designs() {
		if len(d.Expect) == 0 {
			t.Run(d.Name, func(t *testing.T) { cleanAndCovered(t, d) })
		}
	}
}

// cleanAndCovered explores d, which must break nothing and reach every
// cover it must (model.CoversFor).
func cleanAndCovered(t *testing.T, d model.Design) {
	var progress bytes.Buffer
	r, err := Run(d, Options{Bounds: model.DefaultBounds(), Progress: &progress})
	require.NoError(t, err)
	for _, v := range r.Violations {
		t.Errorf("%s breaks %s:\n%s", d.Name, v.Invariant, spec.FormatTrace(v.Trace))
	}
	var all []string
	for _, c := range model.CoversFor(&d) {
		all = append(all, c.Name)
	}
	assert.Equal(t, all, r.Covered)
	assert.Equal(t, model.DefaultBounds().Depth, r.Depth)
	assert.Greater(t, r.States, 100000)
	assert.Greater(t, r.Transitions, r.States)
	assert.Contains(t, progress.String(), "done:")
	t.Logf("%s: %d states, %d transitions, %.2fs, %.0f states/s", d.Name, r.States, r.Transitions, r.Seconds, r.StatesPerSecond())
}

// Every historical design's known bug is found, with a short trace that
// replays to a transition breaking the invariant.
func TestVariantsFindTheirBugs(t *testing.T) {
	if testing.Short() {
		t.Skip(notShort)
	}
	for _, d := range model.Designs()[1:] {
		if len(d.Expect) == 0 {
			continue // clean (TestReferenceIsCleanAndCovered)
		}
		b := d.Widen(model.DefaultBounds())
		t.Run(d.Name, func(t *testing.T) {
			r, err := Run(d, Options{Bounds: b, StopWhenFound: d.Expect})
			require.NoError(t, err)
			for _, inv := range d.Expect {
				v, ok := r.Violated(inv)
				require.True(t, ok, "%s not found within depth %d", inv, b.Depth)
				assert.LessOrEqual(t, len(v.Trace), b.Depth)
				outs, err := model.Replay(&d, b, v.Trace)
				require.NoError(t, err, "trace does not replay:\n%s", spec.FormatTrace(v.Trace))
				prev := model.Init(b)
				if len(outs) > 1 {
					prev = outs[len(outs)-2].Next
				}
				last := outs[len(outs)-1]
				assert.Contains(t, model.Check(b, model.Transition{Prev: &prev, Out: &last}), inv)
				// The reference, given the same ops, does not break it: the
				// variant's switch is what makes the bug.
				refd, err := model.DesignByName("reference")
				require.NoError(t, err)
				if routs, err := model.Replay(&refd, b, v.Trace); err == nil {
					rprev := model.Init(b)
					for _, o := range routs {
						assert.NotContains(t, model.Check(b, model.Transition{Prev: &rprev, Out: &o}), inv, "reference, %s", o.Op)
						rprev = o.Next
					}
				}
				// The text form round-trips, so the trace can become a
				// scenario file.
				back, err := spec.ParseTrace(spec.FormatTrace(v.Trace))
				require.NoError(t, err)
				assert.Equal(t, v.Trace, back)
				t.Logf("%s: %s in %d ops", d.Name, inv, len(v.Trace))
			}
		})
	}
}

func TestRunIsDeterministic(t *testing.T) {
	b := model.DefaultBounds()
	b.Depth = 9
	d, err := model.DesignByName("no-commit-point")
	require.NoError(t, err)
	r1, err := Run(d, Options{Bounds: b})
	require.NoError(t, err)
	r2, err := Run(d, Options{Bounds: b})
	require.NoError(t, err)
	assert.Equal(t, r1.States, r2.States)
	assert.Equal(t, r1.Transitions, r2.Transitions)
	assert.Equal(t, r1.Violations, r2.Violations)
}

func TestSmallBoundsExhaust(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.Bounds{Procs: 1, Names: 1, Programs: 1, Kernels: 1, Sources: 1, Depth: 60}
	r, err := Run(d, Options{Bounds: b})
	require.NoError(t, err)
	assert.True(t, r.Exhausted, "one process, one name: the space closes")
	assert.Less(t, r.Depth, 60)
	assert.Empty(t, r.Violations)
}

func TestRunLimits(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	r, err := Run(d, Options{Bounds: model.DefaultBounds(), MaxStates: 1000})
	require.NoError(t, err)
	assert.True(t, r.Truncated)
	assert.False(t, r.Exhausted)

	_, err = Run(d, Options{Bounds: model.Bounds{}})
	assert.ErrorIs(t, err, model.ErrBounds)
}

// BenchmarkExplore reports the explorer's rate on one core (goal: at least
// 100,000 states/s): per wall-clock second, and per second of CPU time the
// process used, which is what one core delivers when the machine is shared.
func BenchmarkExplore(b *testing.B) {
	d, err := model.DesignByName("reference")
	require.NoError(b, err)
	bounds := model.DefaultBounds()
	bounds.Depth = 12
	var states, trans int
	var secs float64
	cpu0 := cpuSeconds()
	for b.Loop() {
		r, err := Run(d, Options{Bounds: bounds})
		require.NoError(b, err)
		states += r.States
		trans += r.Transitions
		secs += r.Seconds
	}
	cpu := cpuSeconds() - cpu0
	b.ReportMetric(float64(states)/secs, "states/s")
	b.ReportMetric(float64(trans)/secs, "transitions/s")
	if cpu > 0 {
		b.ReportMetric(float64(states)/cpu, "states/cpu-s")
	}
}

// cpuSeconds is the user and system CPU time of the process so far (the
// garbage collector's share included).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// Visiting one state per mirror pair finds the same invariants with traces
// of the same length, in fewer states.
func TestSymmetryLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip(notShort)
	}
	b := model.DefaultBounds()
	b.Depth = 10
	for _, d := range model.Designs() {
		sym, err := Run(d, Options{Bounds: b})
		require.NoError(t, err)
		all, err := Run(d, Options{Bounds: b, NoSymmetry: true})
		require.NoError(t, err)
		assert.Less(t, sym.States, all.States, d.Name)
		assert.Equal(t, all.Covered, sym.Covered, d.Name)
		require.Len(t, sym.Violations, len(all.Violations), d.Name)
		for i := range all.Violations {
			assert.Equal(t, all.Violations[i].Invariant, sym.Violations[i].Invariant, d.Name)
			assert.Len(t, sym.Violations[i].Trace, len(all.Violations[i].Trace), d.Name)
			_, err := model.Replay(&d, b, sym.Violations[i].Trace)
			assert.NoError(t, err, "%s %s", d.Name, sym.Violations[i].Invariant)
		}
	}
}

// TestStopInterrupts: a closed Stop ends the run at once with what was
// found so far, marked Interrupted and not Exhausted.
func TestStopInterrupts(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	stop := make(chan struct{})
	close(stop)
	r, err := Run(d, Options{Bounds: model.DefaultBounds(), Stop: stop})
	require.NoError(t, err)
	require.True(t, r.Interrupted)
	require.False(t, r.Exhausted)
	require.Less(t, r.States, 10000)
}

// TestMaxHeapBytesStops: a heap bound below what the run needs stops it
// as OutOfMemory.
func TestMaxHeapBytesStops(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	r, err := Run(d, Options{Bounds: model.DefaultBounds(), MaxHeapBytes: 1})
	require.NoError(t, err)
	require.True(t, r.OutOfMemory)
	require.False(t, r.Exhausted)
}

// fpSet: every fingerprint added is found again, through every growth,
// and only fingerprints added are found.
func TestFPSet(t *testing.T) {
	s := newFPSet()
	x := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	var added []uint64
	for range 50000 {
		fp := next()
		require.True(t, s.add(fp))
		added = append(added, fp)
	}
	for _, fp := range added {
		require.False(t, s.add(fp))
	}
	assert.Equal(t, len(added), s.n)
	assert.Greater(t, len(s.slots), 4096, "it grew")
	assert.LessOrEqual(t, s.n, len(s.slots)/5*4)
	// Fingerprints that share their top bits land next to each other.
	assert.True(t, s.add(1<<63|1))
	assert.True(t, s.add(1<<63|2))
	assert.False(t, s.add(1<<63|1))
	// 0 marks a free slot: it is kept as 1.
	assert.True(t, s.add(0))
	assert.False(t, s.add(1))
}

// A trace rebuilt from the parent links: from the start state it is the
// last op alone, from a later state the ops that reached it, with the
// processes renamed after each swap to the canonical form.
func TestLinksTraces(t *testing.T) {
	l := newLinks()
	fin := func(p spec.Proc) spec.Op { return spec.Op{Kind: spec.OpFinalize, Proc: p} }
	assert.Equal(t, []spec.Op{fin(1)}, l.trace(0, fin(1)))
	assert.Empty(t, l.path(0))
	l.add(0, fin(0), model.SwapProcs) // state 1, its processes swapped
	l.add(1, fin(0), 0)               // state 2: canonical process 0 is process 1 of the run
	assert.Equal(t, []spec.Op{fin(0), fin(1)}, l.path(2))
	assert.Equal(t, []spec.Op{fin(0), fin(1), fin(0)}, l.trace(2, fin(1)))
}

// The frontier gives back the encodings pushed, in order, across blocks
// and after a reset.
func TestFrontierKeepsOrder(t *testing.T) {
	var f frontier
	for round := range 2 {
		f.reset()
		var want []model.Encoding
		for i := range 3000 {
			var e model.Encoding
			for j := range e {
				if (i+j+round)%5 == 0 {
					e[j] = byte(i + j)
				}
			}
			f.push(&e)
			want = append(want, e)
		}
		require.Equal(t, len(want), f.n)
		require.Greater(t, len(f.b), 1, "several blocks")
		// Each block is filled before the next: no more blocks than the
		// states' encodings with their bitmaps need.
		require.LessOrEqual(t, len(f.b), 3000*(bitmapSize+model.EncodedSize)/frontBlock+1)
		for k := range f.b { // and a block is closed before a state could overflow it (append would copy it)
			require.Equal(t, frontBlock, cap(f.b[k]), "block %d", k)
		}
		var c cursor
		for i := range want {
			var e model.Encoding
			f.pop(&c, &e)
			require.Equal(t, want[i], e, "state %d", i)
		}
	}
}

// TestReinitCover: the explorer reaches ExecuTorch's heap fall-back
// re-init (a reservation truncating another process's commit in place)
// and breaks I3 there; the reference, given the same ops, truncates
// nothing and breaks nothing, and is not asked to reach the cover.
func TestReinitCover(t *testing.T) {
	d, err := model.DesignByName("executorch")
	require.NoError(t, err)
	b := model.DefaultBounds()
	b.Names, b.Kernels, b.Sources = 2, 1, 1
	r, err := Run(d, Options{Bounds: b})
	require.NoError(t, err)
	c, ok := r.ReachedCover(model.CoverReinitTruncates)
	require.True(t, ok, "the re-init is not reached within depth %d", b.Depth)
	outs, err := model.Replay(&d, b, c.Trace)
	require.NoError(t, err)
	prev := outs[len(outs)-2].Next
	last := outs[len(outs)-1]
	require.Contains(t, model.Check(b, model.Transition{Prev: &prev, Out: &last}), spec.InvCommitSurvives)

	ref, err := model.DesignByName("reference")
	require.NoError(t, err)
	// The reference's re-init reads A's commit, so the look-up before the
	// reservation hits and there is no reservation.
	routs, err := model.Replay(&ref, b, c.Trace[:len(c.Trace)-1])
	require.NoError(t, err, "the reference does not replay the trace")
	require.True(t, routs[len(routs)-1].Result.Hit, "reference, %s", routs[len(routs)-1].Op)
	rprev := model.Init(b)
	for _, o := range routs {
		require.Empty(t, model.Check(b, model.Transition{Prev: &rprev, Out: &o}), "reference, %s", o.Op)
		require.Zero(t, o.Events&model.EvtTruncate, "reference, %s", o.Op)
		rprev = o.Next
	}
	for _, cv := range model.CoversFor(&ref) {
		require.NotEqual(t, model.CoverReinitTruncates, cv.Name)
	}
	t.Logf("%d ops:\n%s", len(c.Trace), spec.FormatTrace(c.Trace))
}
