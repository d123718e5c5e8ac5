package explore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
)

// sameVerdicts holds a run with the names exchanged (reduced) to one
// without (all): the same invariants broken, by traces of the same length
// that replay and break them, the same covers, and when both exhaust, the
// same liveness verdict with a lasso that replays.
//
// A symmetry keeps every state's distance from the start, so the deepest
// level is the same too (exact); a quotient that merges states at
// different distances may end sooner.
func sameVerdicts(t *testing.T, d *model.Design, b model.Bounds, reduced, all Result, exact bool) {
	t.Helper()
	assert.LessOrEqual(t, reduced.States, all.States, "%s: no more states", d.Name)
	assert.Equal(t, all.Exhausted, reduced.Exhausted, d.Name)
	if exact {
		assert.Equal(t, all.Depth, reduced.Depth, d.Name)
	}
	assert.Equal(t, all.Covered, reduced.Covered, d.Name)
	require.Equal(t, invariants(all.Violations), invariants(reduced.Violations), d.Name)
	for i, v := range reduced.Violations {
		assert.Len(t, v.Trace, len(all.Violations[i].Trace), "%s %s: shortest trace", d.Name, v.Invariant)
		outs, err := model.Replay(d, b, v.Trace)
		require.NoError(t, err, "%s %s", d.Name, v.Invariant)
		prev := model.Init(b)
		if len(outs) > 1 {
			prev = outs[len(outs)-2].Next
		}
		assert.Contains(t, model.Check(b, model.Transition{Prev: &prev, Out: &outs[len(outs)-1]}), v.Invariant, d.Name)
	}
	if !all.Exhausted {
		return
	}
	require.True(t, all.Liveness.Checked && reduced.Liveness.Checked, d.Name)
	assert.Equal(t, all.Liveness.FairComponents > 0, reduced.Liveness.FairComponents > 0, d.Name)
	require.Len(t, reduced.Liveness.Violations, len(all.Liveness.Violations), d.Name)
	for i, l := range reduced.Liveness.Violations {
		assert.Equal(t, all.Liveness.Violations[i].Invariant, l.Invariant, d.Name)
		requireLasso(t, d, b, l)
	}
}

// Visiting one state of each pair that differs by exchanging w0 and w1
// (model.Bounds.Symmetries) loses no verdict, on every design: bounded at
// two processes and two source versions, to the end at one process, and
// to the end at two processes for the designs whose graph is small there
// (both with a liveness violation).
func TestNameSymmetryLosesNothing(t *testing.T) {
	type variant struct {
		b       model.Bounds
		designs map[string]bool // nil: every design
	}
	variants := []variant{
		{b: model.Bounds{Procs: 2, Names: 2, Programs: 1, Kernels: 2, Sources: 2, Foreign: true, Depth: 10}},
		{b: model.Bounds{Procs: 1, Names: 2, Programs: 1, Kernels: 2, Sources: 1, Foreign: true}},
		{b: model.Bounds{Procs: 2, Names: 2, Programs: 1, Kernels: 1, Sources: 1},
			designs: map[string]bool{"pr19862-no-index": true, "executorch": true}},
	}
	if testing.Short() {
		variants = variants[:2]
	}
	for _, v := range variants {
		require.NotZero(t, v.b.Symmetries()&model.SwapNames)
		for _, d := range model.Designs() {
			if v.designs != nil && !v.designs[d.Name] {
				continue
			}
			reduced, err := Run(d, Options{Bounds: v.b, Liveness: true})
			require.NoError(t, err)
			all, err := Run(d, Options{Bounds: v.b, Liveness: true, NoNameSymmetry: true})
			require.NoError(t, err)
			sameVerdicts(t, &d, v.b, reduced, all, true)
			assert.Less(t, reduced.States, all.States, d.Name)
		}
	}
}

// Forgetting the fields no future step reads (model.Canon) loses no
// verdict, on every design: to the end at one name and one kernel
// (liveness too), bounded at two names and sources, and to the end at two
// names and programs with one process.
func TestForgettingDeadFieldsLosesNothing(t *testing.T) {
	bounds := []model.Bounds{
		{Procs: 2, Names: 1, Programs: 1, Kernels: 1, Sources: 1, Foreign: true},
		{Procs: 2, Names: 2, Programs: 1, Kernels: 2, Sources: 2, Foreign: true, Depth: 10},
		{Procs: 1, Names: 2, Programs: 2, Kernels: 2, Sources: 1, Foreign: true},
	}
	fewer := 0
	for _, b := range bounds {
		for _, d := range model.Designs() {
			reduced, err := Run(d, Options{Bounds: b, Liveness: true})
			require.NoError(t, err)
			all, err := Run(d, Options{Bounds: b, Liveness: true, KeepDeadFields: true})
			require.NoError(t, err)
			sameVerdicts(t, &d, b, reduced, all, false)
			if reduced.States < all.States {
				fewer++
			}
		}
	}
	assert.Positive(t, fewer)
}

// Forgetting dead fields is exact: without renamings the explorer visits
// one state for each class of the states the model reaches (model.Canon),
// no more and no fewer. A state in no class would be a forgotten state
// stepping where no reached state steps (a rule that is no bisimulation,
// which sampled states may not show); a class never visited, a lost one.
//
// The designs are those whose reads make a rule hold back (the loaded flag,
// an init's lock, a forged footer, no index) and the reference: every
// design takes minutes in the plain search.
func TestForgettingDeadFieldsIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("a plain search over every reached state")
	}
	b := model.Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 1, Sources: 1, Foreign: true}
	alphabet := model.Alphabet(b)
	for _, name := range []string{"reference", "repack-to-heap", "no-commit-point", "executorch", "pr19862-no-index"} {
		d, err := model.DesignByName(name)
		require.NoError(t, err)
		r, err := Run(d, Options{Bounds: b, NoSymmetry: true})
		require.NoError(t, err)
		require.True(t, r.Exhausted, d.Name)
		forget := model.NewCanon(&d, b, 0, false)
		var e model.Encoding
		start := model.Init(b)
		seen := map[model.State]bool{start: true}
		classes := map[model.Encoding]bool{}
		for level := []model.State{start}; len(level) > 0; {
			var next []model.State
			for _, s := range level {
				forget.Encode(&s, &e)
				classes[e] = true
				for _, op := range alphabet {
					for _, o := range model.Step(&d, b, s, op) {
						if !seen[o.Next] {
							seen[o.Next] = true
							next = append(next, o.Next)
						}
					}
				}
			}
			level = next
		}
		assert.Equal(t, len(classes), r.States, "%s: %d reached states", d.Name, len(seen))
	}
}
