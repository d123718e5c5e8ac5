package explore

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// naive is what a plain breadth-first search over model.Step finds: a map
// of states instead of fingerprints, a slice per level, one goroutine. It
// is the explorer's oracle: the explorer must count the same states,
// transitions and levels, find each invariant at the same depth and reach
// the same covers (docs/mutation.md: the explorer's counting, bounds and
// stops are pinned by this).
type naive struct {
	states, transitions, depth int
	levels                     []int // states first seen at each depth (level 0: the start)
	after                      []int // states seen after expanding each state, in order
	exhausted                  bool
	violated                   map[spec.InvariantID]int // shortest trace length
	covered                    []string
}

// naiveRun searches as opts asks the explorer to: its bounds, and states
// identified by the same canonical form (model.Canon, whose soundness
// model's tests hold; this oracle pins the explorer's search, not the
// form). Without symmetry and with dead fields kept it steps the
// concrete states themselves.
func naiveRun(d *model.Design, opts Options) naive {
	b := opts.Bounds
	canon := model.NewCanon(d, b, opts.symmetries(), opts.KeepDeadFields)
	key := func(s model.State) (model.State, model.Encoding) {
		var e model.Encoding
		canon.Encode(&s, &e)
		return e.Decode(), e
	}
	start, e := key(model.Init(b))
	seen := map[model.Encoding]bool{e: true}
	level := []model.State{start}
	covers := model.CoversFor(d)
	reached := make([]bool, len(covers))
	r := naive{states: 1, levels: []int{1}, violated: map[spec.InvariantID]int{}}
	for depth := 0; (b.Depth == 0 || depth < b.Depth) && len(level) > 0; depth++ {
		r.depth = depth + 1
		var next []model.State
		for _, s := range level {
			for _, op := range model.Alphabet(b) {
				for _, o := range model.Step(d, b, s, op) {
					r.transitions++
					t := model.Transition{Prev: &s, Out: &o}
					for _, inv := range model.Check(b, t) {
						if _, ok := r.violated[inv]; !ok {
							r.violated[inv] = depth + 1
						}
					}
					for i, c := range covers {
						reached[i] = reached[i] || c.Reached(t)
					}
					n, e := key(o.Next)
					if !seen[e] {
						seen[e] = true
						next = append(next, n)
					}
				}
			}
			r.after = append(r.after, r.states+len(next))
		}
		r.states += len(next)
		r.levels = append(r.levels, len(next))
		r.exhausted = len(next) == 0
		level = next
	}
	for i, c := range covers {
		if reached[i] {
			r.covered = append(r.covered, c.Name)
		}
	}
	return r
}

// sameAsNaive runs the explorer and checks it against the naive search.
func sameAsNaive(t *testing.T, d model.Design, opts Options) (Result, naive) {
	t.Helper()
	r, err := Run(d, opts)
	require.NoError(t, err)
	want := naiveRun(&d, opts)
	assert.Equal(t, want.states, r.States, "states")
	assert.Equal(t, want.transitions, r.Transitions, "transitions")
	assert.Equal(t, want.depth, r.Depth, "depth")
	assert.Equal(t, want.exhausted, r.Exhausted, "exhausted")
	assert.False(t, r.Truncated || r.Stopped || r.Interrupted || r.OutOfMemory)
	assert.Equal(t, want.covered, r.Covered, "covered")
	require.Len(t, r.Violations, len(want.violated), "violations")
	order := map[spec.InvariantID]int{}
	for i, inv := range spec.Invariants() {
		order[inv.ID] = i
	}
	for i, v := range r.Violations {
		if i > 0 {
			assert.Less(t, order[r.Violations[i-1].Invariant], order[v.Invariant], "spec order")
		}
		require.Contains(t, want.violated, v.Invariant)
		assert.Len(t, v.Trace, want.violated[v.Invariant], "%s: shortest trace", v.Invariant)
		outs, err := model.Replay(&d, opts.Bounds, v.Trace)
		require.NoError(t, err, "%s", v.Invariant)
		prev := model.Init(opts.Bounds)
		if len(outs) > 1 {
			prev = outs[len(outs)-2].Next
		}
		assert.Contains(t, model.Check(opts.Bounds, model.Transition{Prev: &prev, Out: &outs[len(outs)-1]}), v.Invariant)
	}
	return r, want
}

// Every design at bounds small enough for the naive search, bounded and
// to the end, with and without symmetry, on one worker and two.
func TestExplorerMatchesNaiveSearch(t *testing.T) {
	bounded := model.Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 2, Sources: 1, Foreign: true, Depth: 7}
	for _, d := range model.Designs() {
		t.Run(d.Name, func(t *testing.T) {
			r, want := sameAsNaive(t, d, Options{Bounds: bounded})
			assert.False(t, r.Exhausted, "7 steps do not close this space")
			assert.Positive(t, want.levels[len(want.levels)-1])
			sameAsNaive(t, d, Options{Bounds: bounded, NoSymmetry: true})
			sameAsNaive(t, d, Options{Bounds: bounded, NoSymmetry: true, KeepDeadFields: true})
			sameAsNaive(t, d, Options{Bounds: bounded, Workers: 2})
		})
	}
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	small := model.Bounds{Procs: 1, Names: 1, Programs: 1, Kernels: 1, Sources: 1}
	r, _ := sameAsNaive(t, d, Options{Bounds: small})
	assert.True(t, r.Exhausted)
	// A bound one level short of the end is not exhausted; at the end it is.
	small.Depth = r.Depth - 1
	short, _ := sameAsNaive(t, d, Options{Bounds: small})
	assert.False(t, short.Exhausted)
	small.Depth = r.Depth
	sameAsNaive(t, d, Options{Bounds: small})
}

// The progress lines say where the search is: the level being expanded,
// the states seen, and the queue (states seen, not yet expanded), printed
// every 1,024 states of a level.
func TestProgressLines(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.DefaultBounds()
	b.Depth = 9
	var out bytes.Buffer
	r, want := sameAsNaive(t, d, Options{Bounds: b, Progress: &out, ProgressEvery: 1})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Greater(t, len(lines), 3)
	// base[i]: states of the levels before level i.
	base := []int{0}
	for _, n := range want.levels {
		base = append(base, base[len(base)-1]+n)
	}
	long := false
	for _, l := range lines[:len(lines)-1] {
		var depth, states, queue, trans int
		var rate float64
		_, err := fmt.Sscanf(l, "explore reference: depth %d, %d states, queue %d, %d transitions, %f states/s",
			&depth, &states, &queue, &trans, &rate)
		require.NoError(t, err, l)
		require.True(t, depth >= 1 && depth <= b.Depth, l)
		// Expanded so far: the earlier levels and k of this one. The next
		// level is queued unless this is the last level the bound lets
		// the search expand.
		k := want.levels[depth-1] - queue
		if depth < b.Depth {
			k = states - queue - base[depth-1]
		}
		assert.Equal(t, 1, k%1024, "a line every 1,024 states of a level: %s", l)
		assert.LessOrEqual(t, k, want.levels[depth-1], l)
		long = long || k > 1024
		assert.LessOrEqual(t, trans, r.Transitions, l)
		assert.Positive(t, rate, l)
	}
	assert.True(t, long, "a level long enough for two lines")
	assert.Equal(t, fmt.Sprintf("explore reference: done: depth %d, %d states, %d transitions, %.2fs, %.0f states/s, %d violations",
		r.Depth, r.States, r.Transitions, r.Seconds, r.StatesPerSecond(), len(r.Violations)), lines[len(lines)-1])
}

// The run's stops end it after the state whose successors crossed the
// limit, or after the level in which every listed invariant was found: the
// same states as the naive search up to there, one worker or two.
func TestStopsAtTheExactState(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 2, Sources: 1, Foreign: true, Depth: 7}
	want := naiveRun(&d, Options{Bounds: b})
	require.Greater(t, len(want.after), 50)
	levelOf := func(i int) int { // the depth (1-based) state i of the expansion order is expanded at
		for l, n := 0, 0; ; l++ {
			if n += want.levels[l]; i < n {
				return l + 1
			}
		}
	}
	for _, workers := range []int{1, 2} {
		for _, i := range []int{3, 40} {
			// A limit equal to a count seen stops right there; one more
			// stops at the next state that adds any.
			for _, limit := range []int{want.after[i], want.after[i] + 1} {
				j := i
				for want.after[j] < limit {
					j++
				}
				r, err := Run(d, Options{Bounds: b, MaxStates: limit, Workers: workers})
				require.NoError(t, err)
				assert.Equal(t, want.after[j], r.States, "MaxStates %d, %d workers", limit, workers)
				assert.Equal(t, levelOf(j), r.Depth, "MaxStates %d", limit)
				assert.True(t, r.Truncated)
				assert.False(t, r.Exhausted || r.Interrupted || r.OutOfMemory || r.Stopped)
			}
		}
		stop := make(chan struct{})
		close(stop)
		r, err := Run(d, Options{Bounds: b, Stop: stop, Workers: workers})
		require.NoError(t, err)
		assert.Equal(t, want.after[0], r.States, "a closed Stop ends the run after the first state")
		assert.True(t, r.Interrupted && r.Truncated)
		assert.False(t, r.Exhausted || r.OutOfMemory)

		r, err = Run(d, Options{Bounds: b, MaxHeapBytes: 1, Workers: workers})
		require.NoError(t, err)
		assert.Equal(t, want.after[0], r.States, "the heap is over 1 byte at the first check")
		assert.True(t, r.OutOfMemory && r.Truncated)
		assert.False(t, r.Exhausted || r.Interrupted)
	}
	assert.Positive(t, heapBytes())

	// StopWhenFound: every design that breaks something within b, asked
	// to stop at what it breaks, ends after the level of the last found.
	stopped := 0
	for _, d := range model.Designs() {
		want := naiveRun(&d, Options{Bounds: b})
		if len(want.violated) == 0 {
			continue
		}
		stopped++
		var invs []spec.InvariantID
		last := 0
		for inv, l := range want.violated {
			invs = append(invs, inv)
			last = max(last, l)
		}
		r, err := Run(d, Options{Bounds: b, StopWhenFound: invs})
		require.NoError(t, err)
		states := 0
		for _, n := range want.levels[:last+1] {
			states += n
		}
		assert.Equal(t, last, r.Depth, d.Name)
		assert.Equal(t, states, r.States, d.Name)
		assert.True(t, r.Stopped, d.Name)
		assert.False(t, r.Exhausted || r.Truncated, d.Name)
		assert.Len(t, r.Violations, len(invs), d.Name)
	}
	assert.Greater(t, stopped, 2, "designs that break something within b")
}

func TestStatesPerSecond(t *testing.T) {
	assert.Zero(t, Result{States: 10}.StatesPerSecond(), "no time measured")
	assert.Equal(t, 5.0, Result{States: 10, Seconds: 2}.StatesPerSecond())
}

// Without ProgressEvery, a progress line is due once a second: a run that
// takes a few milliseconds prints only its last line.
func TestProgressDefaultsToASecond(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	var out bytes.Buffer
	b := model.Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 2, Sources: 1, Foreign: true, Depth: 5}
	r, err := Run(d, Options{Bounds: b, Progress: &out})
	require.NoError(t, err)
	if r.Seconds >= 0.9 {
		t.Skipf("the run took %.2fs: too slow to tell", r.Seconds)
	}
	assert.Equal(t, 1, strings.Count(out.String(), "\n"), out.String())
	assert.Contains(t, out.String(), "done:")
}

// The liveness pass prints progress as the search does: in the
// fingerprint mode while it names the graph's steps, in both modes while
// it searches for components; after the search's lines, before the last.
func TestLivenessProgressLines(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.ExhaustiveBounds()
	b.Kernels = 1
	for _, fp := range []bool{false, true} {
		var out bytes.Buffer
		r, err := Run(d, Options{Bounds: b, Liveness: true, Fingerprints: fp, TempFiles: newTestTemp(t), Progress: &out, ProgressEvery: 1})
		require.NoError(t, err)
		require.True(t, r.Liveness.Checked)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		var named, searched []int
		total := -1
		require.Contains(t, lines[len(lines)-1], "done:")
		for _, l := range lines[:len(lines)-1] {
			var k, n, comps int
			switch {
			case strings.Contains(l, "liveness: naming"):
				_, err := fmt.Sscanf(l, "explore reference: liveness: naming steps, %d of %d states", &k, &n)
				require.NoError(t, err, l)
				named = append(named, k)
			case strings.Contains(l, "liveness:"):
				_, err := fmt.Sscanf(l, "explore reference: liveness: %d of %d states, %d components", &k, &n, &comps)
				require.NoError(t, err, l)
				searched = append(searched, k)
				assert.Less(t, comps, k, l)
			default:
				assert.Empty(t, append(named, searched...), "a search line after the pass's: %s", l)
				continue
			}
			assert.LessOrEqual(t, k, n, l)
			assert.True(t, total < 0 || total == n, "one graph: %s", l)
			total = n
		}
		if fp {
			assert.Greater(t, len(named), 1, "fingerprints: naming lines")
		} else {
			assert.Empty(t, named, "in memory no step is named")
			assert.Equal(t, r.States, total, "in memory the graph has every state")
		}
		assert.Greater(t, len(searched), 1, "fingerprints %v: component lines", fp)
		assert.True(t, slices.IsSorted(named) && slices.IsSorted(searched), "counts only grow")
	}
}
