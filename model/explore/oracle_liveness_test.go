package explore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// naiveFair counts the fair components of a design's whole state space
// the plain way: every concrete state (no symmetry), the quiet steps
// between states whose processes run the installed versions, less the
// converged launches, and Tarjan's components of that graph, a component
// being fair when its own edges include a finalize by every process. It is
// the liveness check's oracle (docs/model.md, "Liveness").
func naiveFair(d *model.Design, b model.Bounds) int {
	type edge struct {
		to   int
		proc int // the finalizing process, or -1
	}
	var states []model.State
	var adj [][]edge
	ids := map[model.Encoding]int{}
	id := func(s model.State) int {
		var e model.Encoding
		s.Encode(&e)
		if i, ok := ids[e]; ok {
			return i
		}
		ids[e] = len(states)
		states = append(states, s)
		adj = append(adj, nil)
		return len(states) - 1
	}
	id(model.Init(b))
	for i := 0; i < len(states); i++ {
		s := states[i]
		for _, op := range model.Alphabet(b) {
			for _, o := range model.Step(d, b, s, op) {
				j := id(o.Next)
				t := model.Transition{Prev: &s, Out: &o}
				if !model.Quiet(op) || !model.Current(b, &s) || model.ConvergedLaunch(b, t) || j == i {
					continue
				}
				p := -1
				if model.Launched(t) {
					p = int(op.Proc)
				}
				adj[i] = append(adj[i], edge{j, p})
			}
		}
	}
	// Tarjan, recursive: these graphs are small.
	n := len(states)
	index, low, comp := make([]int, n), make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	var stack []int
	next, comps, fair := 1, 0, 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, e := range adj[v] {
			switch {
			case index[e.to] == 0:
				visit(e.to)
				low[v] = min(low[v], low[e.to])
			case onStack[e.to]:
				low[v] = min(low[v], index[e.to])
			}
		}
		if low[v] != index[v] {
			return
		}
		comps++
		var members []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp[w] = comps
			members = append(members, w)
			if w == v {
				break
			}
		}
		var launched uint8
		internal := false
		for _, m := range members {
			for _, e := range adj[m] {
				if comp[e.to] == comps {
					internal = true
					if e.proc >= 0 {
						launched |= 1 << e.proc
					}
				}
			}
		}
		if internal && launched == 1<<b.Procs-1 {
			fair++
		}
	}
	for v := range n {
		if index[v] == 0 {
			visit(v)
		}
	}
	return fair
}

// The liveness check finds as many fair components as the plain search
// over every concrete state, and with the mirror images merged the same
// verdict; a lasso when there is one. Every design at one process; at two,
// the smallest spaces with and without fair components (the rest take
// tens of seconds in the plain search).
func TestLivenessMatchesNaiveSearch(t *testing.T) {
	one := model.Bounds{Procs: 1, Names: 1, Programs: 1, Kernels: 2, Sources: 1}
	two := model.Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 1, Sources: 1}
	fair := 0
	for _, d := range model.Designs() {
		fair += livenessLikeNaive(t, d, one)
	}
	for _, name := range []string{"pr19862-no-index", "executorch", "pr19988-cache-loaded-flag"} {
		d, err := model.DesignByName(name)
		require.NoError(t, err)
		fair += livenessLikeNaive(t, d, two)
	}
	assert.Greater(t, fair, 10, "fair components to find")
}

func livenessLikeNaive(t *testing.T, d model.Design, b model.Bounds) int {
	want := naiveFair(&d, b)
	// The plain search visits concrete states: so does the explorer here
	// (no renaming, no field forgotten), for the counts to compare.
	all, err := Run(d, Options{Bounds: b, Liveness: true, NoSymmetry: true, KeepDeadFields: true})
	require.NoError(t, err)
	require.True(t, all.Exhausted && all.Liveness.Checked, d.Name)
	assert.Equal(t, want, all.Liveness.FairComponents, "%s %+v", d.Name, b)
	sym, err := Run(d, Options{Bounds: b, Liveness: true}) // every reduction: the same verdict
	require.NoError(t, err)
	assert.Equal(t, want > 0, sym.Liveness.FairComponents > 0, "%s %+v", d.Name, b)
	for _, r := range []Result{all, sym} {
		if r.Liveness.FairComponents == 0 {
			assert.Empty(t, r.Liveness.Violations)
			continue
		}
		require.Len(t, r.Liveness.Violations, 1, d.Name)
		assert.Equal(t, spec.InvConverge, r.Liveness.Violations[0].Invariant)
		requireLasso(t, &d, b, r.Liveness.Violations[0])
	}
	return want
}
