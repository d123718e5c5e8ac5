package explore

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// livenessBounds are small enough to exhaust every design in a few seconds
// and large enough for a kernel upgrade and two processes racing.
var livenessBounds = model.Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 2, Sources: 1}

// The reference converges; repack-to-heap and pr19862-no-index do not, and
// each lasso is a behaviour of the design: it replays, its cycle returns to
// the state it starts from, every process finalizes in the cycle, and no
// launch in it hits everything without writing.
func TestLivenessVerdicts(t *testing.T) {
	b := livenessBounds
	names := []string{"reference", "on-compute", "repack-to-heap", "pr19862-no-index"}
	if testing.Short() {
		// notShort: one kernel version, where repack-to-heap still loops.
		b.Kernels = 1
		names = append(names[:1], names[2:]...)
	}
	livenessVerdicts(t, b, names)
}

// livenessVerdicts explores each named design to the end within b with
// the liveness check: a design expecting no violation has no fair
// component; any other gives one lasso naming I4-converge that is a
// behaviour of the design (requireLasso).
func livenessVerdicts(t *testing.T, b model.Bounds, names []string) {
	t.Helper()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			d, err := model.DesignByName(name)
			require.NoError(t, err)
			r, err := Run(d, Options{Bounds: b, Liveness: true})
			require.NoError(t, err)
			require.True(t, r.Exhausted)
			require.True(t, r.Liveness.Checked)
			if len(d.Expect) == 0 {
				assert.Empty(t, r.Violations)
				assert.Zero(t, r.Liveness.FairComponents)
				assert.Empty(t, r.Liveness.Violations)
				return
			}
			require.Len(t, r.Liveness.Violations, 1)
			l := r.Liveness.Violations[0]
			assert.Equal(t, spec.InvConverge, l.Invariant)
			requireLasso(t, &d, b, l)
		})
	}
}

// twoProgramBounds are the least bounds at which a second program exposed
// the reference's fault (docs/bugs.md, "A fall-back heap packing kept
// out of the file"): with two programs on one name, a long-lived process
// keeps the heap fall-back packing of one program loaded, and the other
// program's launches used to hit it forever, so the file never got the
// name. About 170,000 states for the reference, under a second.
var twoProgramBounds = model.Bounds{Procs: 2, Names: 1, Programs: 2, Kernels: 1, Sources: 1}

// The reference and the on-compute policy converge with two programs;
// pr19862-no-index still loops.
func TestLivenessTwoPrograms(t *testing.T) {
	livenessVerdicts(t, twoProgramBounds, []string{"reference", "on-compute", "pr19862-no-index"})
}

func requireLasso(t *testing.T, d *model.Design, b model.Bounds, l Lasso) {
	t.Helper()
	require.NotEmpty(t, l.Cycle)
	outs, err := model.Replay(d, b, append(append([]spec.Op(nil), l.Prefix...), l.Cycle...))
	require.NoError(t, err)
	start := model.Init(b)
	if len(l.Prefix) > 0 {
		start = outs[len(l.Prefix)-1].Next
	}
	assert.Equal(t, start, outs[len(outs)-1].Next, "the cycle returns to where it starts")
	var finalized uint8
	prev := start
	for _, o := range outs[len(l.Prefix):] {
		assert.True(t, model.Quiet(o.Op), "%s: the environment is quiet in the cycle", o.Op)
		if o.Op.Kind == spec.OpFinalize {
			finalized |= 1 << o.Op.Proc
		}
		assert.False(t, model.ConvergedLaunch(b, model.Transition{Prev: &prev, Out: &o}), "%s converges", o.Op)
		prev = o.Next
	}
	assert.Equal(t, uint8(1)<<b.Procs-1, finalized, "every process launches in the cycle")
}

// The liveness check judges the graph with the processes' mirror images
// merged as it judges the full graph: the same verdict on every design.
func TestLivenessSymmetryLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip(notShort)
	}
	b := livenessBounds
	b.Kernels = 1
	for _, d := range model.Designs() {
		sym, err := Run(d, Options{Bounds: b, Liveness: true})
		require.NoError(t, err)
		all, err := Run(d, Options{Bounds: b, Liveness: true, NoSymmetry: true})
		require.NoError(t, err)
		require.True(t, sym.Liveness.Checked && all.Liveness.Checked, d.Name)
		assert.Equal(t, len(all.Liveness.Violations), len(sym.Liveness.Violations), d.Name)
		assert.Equal(t, all.Liveness.FairComponents > 0, sym.Liveness.FairComponents > 0, d.Name)
		assert.Equal(t, invariants(all.Violations), invariants(sym.Violations), d.Name)
		for _, l := range sym.Liveness.Violations {
			requireLasso(t, &d, b, l)
		}
	}
}

func invariants(vs []Violation) []spec.InvariantID {
	var out []spec.InvariantID
	for _, v := range vs {
		out = append(out, v.Invariant)
	}
	return out
}

// A converged launch that the check did not count as one would make the
// reference look like it never converges: the check is not vacuous.
func TestLivenessNeedsConvergedLaunches(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := livenessBounds
	b.Kernels = 1
	r, kept, err := run(d, Options{Bounds: b, Liveness: true})
	require.NoError(t, err)
	require.Zero(t, r.Liveness.FairComponents)
	// The same graph with every converged launch taken for a launch that
	// did not converge.
	g := kept.g
	for e := range g.n {
		if fl := g.flags.at(e); fl&edgeConverged != 0 {
			g.flags.b[e/blockLen][e%blockLen] = fl &^ edgeConverged
		}
	}
	canon := model.NewCanon(&d, b, b.Symmetries(), false)
	lv := checkLiveness(&d, b, g, kept.links, kept.seen, &canon, nil)
	assert.Positive(t, lv.FairComponents)
}

// At model.ExhaustiveBounds the reference's whole state space is explored,
// with no depth bound: every invariant holds on every reachable
// transition, every cover is reached, and convergence holds. (About 1.2
// million states: 10 to 90 seconds on a shared 2-core machine.)
func TestExhaustiveBoundsProveTheReference(t *testing.T) {
	if testing.Short() {
		t.Skip("explores the reference's whole state space")
	}
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	r, err := Run(d, Options{Bounds: model.ExhaustiveBounds(), Liveness: true, Workers: 2})
	require.NoError(t, err)
	assert.True(t, r.Exhausted)
	assert.Empty(t, r.Violations)
	assert.True(t, r.Liveness.Checked)
	assert.Zero(t, r.Liveness.FairComponents)
	var all []string
	for _, c := range model.CoversFor(&d) {
		all = append(all, c.Name)
	}
	assert.Equal(t, all, r.Covered)
	t.Logf("%d states, %d transitions, depth %d, %.1fs", r.States, r.Transitions, r.Depth, r.Seconds)
}

// Every variant's known bug is within model.ExhaustiveBounds too, but for
// the one bug that needs a second source version, which those bounds leave
// out: ExecuTorch's key has no source digest, so its stale hit after a
// model update (I1) is found only with two sources. A kernel upgrade does
// not stand in for it there, as it does for the designs whose key holds
// both (docs/model.md, "Proving").
func TestExhaustiveBoundsFindEveryBug(t *testing.T) {
	if testing.Short() {
		t.Skip(notShort)
	}
	for _, d := range model.Designs() {
		if len(d.Expect) == 0 {
			continue
		}
		b := d.Widen(model.ExhaustiveBounds())
		b.Depth = 20
		r, err := Run(d, Options{Bounds: b, StopWhenFound: d.Expect})
		require.NoError(t, err)
		for _, inv := range d.Expect {
			_, ok := r.Violated(inv)
			assert.True(t, ok, "%s: %s not found", d.Name, inv)
		}
	}
}

// BenchmarkExploreWorkers compares one and two workers on the same
// exhaustive run (the reference at ExhaustiveBounds with one kernel, about
// 51,000 states, liveness on): run with -count N so the two alternate.
func BenchmarkExploreWorkers(b *testing.B) {
	d, err := model.DesignByName("reference")
	require.NoError(b, err)
	bounds := model.ExhaustiveBounds()
	bounds.Kernels = 1
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			var states int
			var secs float64
			for b.Loop() {
				r, err := Run(d, Options{Bounds: bounds, Liveness: true, Workers: w})
				require.NoError(b, err)
				states += r.States
				secs += r.Seconds
			}
			b.ReportMetric(float64(states)/secs, "states/s")
		})
	}
}

// A walk that ends at the mirror image of the state it left (no state's
// parity says which process is which where a state is its own mirror, so
// the lasso's walk can end there) is closed by going round once more with
// the processes swapped: the cycle is both rounds and returns to the state
// itself; the prefix is kept.
func TestCloseRoundsGoesRoundRenamed(t *testing.T) {
	b := model.ExhaustiveBounds()
	r := replayRound(t, b, "init proc=A program=P1",
		"lookup proc=A name=w0\ncrash kind=process proc=A branch=idle\ninit proc=B program=P1")
	d, canon, prefix, round, start, end := *r.d, r.canon, r.prefix, r.round, r.start, r.end
	require.NotEqual(t, start, end)
	require.Equal(t, start.Renamed(model.SwapProcs), end, "the round ends at the start's mirror image")

	p, cycle, ok := closeRounds(&d, b, &canon, start, end, slices.Clone(prefix), slices.Clone(round))
	require.True(t, ok)
	assert.Equal(t, prefix, p)
	require.Len(t, cycle, 2*len(round))
	assert.Equal(t, round, cycle[:len(round)])
	for k, op := range round {
		assert.Equal(t, model.SwapProcs.Op(op), cycle[len(round)+k], "the second round is the first with A and B swapped")
	}
	outs, err := model.Replay(&d, b, append(p, cycle...))
	require.NoError(t, err)
	assert.Equal(t, start, outs[len(outs)-1].Next, "the cycle returns to the state it left")
}

// round is a reference-design walk replayed as a prefix and one round, for
// closeRounds: start is the state after the prefix, end after the round.
type round struct {
	d             *model.Design
	canon         model.Canon
	prefix, round []spec.Op
	start, end    model.State
}

func replayRound(t *testing.T, b model.Bounds, prefix, rnd string) round {
	t.Helper()
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	r := round{d: &d}
	r.canon = model.NewCanon(r.d, b, b.Symmetries(), false)
	r.prefix, err = spec.ParseTrace(prefix)
	require.NoError(t, err)
	r.round, err = spec.ParseTrace(rnd)
	require.NoError(t, err)
	outs, err := model.Replay(r.d, b, append(slices.Clone(r.prefix), r.round...))
	require.NoError(t, err)
	r.start, r.end = outs[len(r.prefix)-1].Next, outs[len(outs)-1].Next
	return r
}
