package explore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// noStates names no state: buildLasso finds no op for a step of a
// hand-built graph, so checkLiveness's counts are all a test reads.
type noStates struct{}

func (noStates) path(int32) []spec.Op         { return nil }
func (noStates) lookup(uint64) (uint32, bool) { return 0, false }

// edge is a step of a hand-built graph: from and to are state numbers.
type edge struct {
	from, to int
	flags    uint8
}

// handGraph builds the graph of the given steps (listed by from, in
// order), as the explorer adds them.
func handGraph(edges []edge) *graph {
	n := 0
	for _, e := range edges {
		n = max(n, e.from+1, e.to+1)
	}
	g := &graph{}
	k := 0
	for v := range n {
		g.startNode()
		for ; k < len(edges) && edges[k].from == v; k++ {
			g.add(uint32(edges[k].to), edges[k].flags)
		}
	}
	g.finish()
	return g
}

// The check's components are the graph's: a launch on a step between two
// components counts in neither. With the processes' mirror images merged, a cycle of the graph may be
// half of a concrete cycle: it closes on the start's mirror image, and a
// finalize by the canonical process A is by B on the way back. The check
// counts such a cycle as fair exactly when going round it twice launches
// both processes; without the merging (no SwapProcs in the group) the same
// steps are read as they are.
func TestFairCycleThroughMirrorImages(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 1, Sources: 1}
	const (
		launchA = edgeQuiet | edgeLaunch
		launchB = edgeQuiet | edgeLaunch | edgeLaunchB
		swap    = edgeQuiet | edgeSwapped
	)
	cases := []struct {
		name      string
		edges     []edge
		sym, full int // fair components with and without SwapProcs
	}{
		// A launches, then the state is the start's mirror image: round
		// again, B launches.
		{"swapped once", []edge{{0, 1, launchA}, {1, 0, swap}}, 1, 0},
		// Swapped twice: back to the start as it was, only A launches.
		{"swapped twice", []edge{{0, 1, launchA | edgeSwapped}, {1, 0, swap}}, 0, 0},
		// The canonical A launches in both halves, the second time as B.
		{"A in each half", []edge{{0, 1, launchA | edgeSwapped}, {1, 0, launchA | edgeSwapped}}, 1, 0},
		// The canonical B launches after the swap: concrete A both times.
		{"B after the swap", []edge{{0, 1, launchA | edgeSwapped}, {1, 0, launchB | edgeSwapped}}, 0, 1},
		// No swap: both launch, or only one does.
		{"both launch", []edge{{0, 1, launchA}, {1, 0, launchB}}, 1, 1},
		{"one launches", []edge{{0, 1, launchA}, {1, 0, swap &^ edgeSwapped}}, 0, 0},
		// A converged launch leaves the graph the check searches.
		{"converged", []edge{{0, 1, launchA | edgeConverged}, {1, 0, swap}}, 0, 0},
		// B launches on the way into a cycle where only A does: two
		// components, neither fair.
		{"launch into a cycle", []edge{{0, 1, launchB}, {1, 2, launchA}, {2, 1, swap &^ edgeSwapped}}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, group := range []model.Renaming{model.SwapProcs, 0} {
				g := handGraph(c.edges)
				canon := model.NewCanon(&d, b, group, false)
				lv := checkLiveness(&d, b, g, noStates{}, noStates{}, &canon, nil)
				require.True(t, lv.Checked)
				want := c.full
				if group != 0 {
					want = c.sym
				}
				assert.Equal(t, want, lv.FairComponents, "group %v", group)
				assert.Empty(t, lv.Violations, "no state of a hand-built graph replays")
			}
		})
	}
}

// Merging the processes' mirror images costs a counterexample nothing: the
// walk through a fair component follows each state's parity (which
// process is which), so the lasso's prefix and cycle are as long as those
// the full graph gives. A walk that lost the parity would end at the
// start's mirror image and go round twice.
func TestLassoAsShortAsWithoutSymmetry(t *testing.T) {
	b := livenessBounds
	b.Kernels = 1
	for _, name := range []string{"pr19862-no-index", "repack-to-heap", "executorch"} {
		d, err := model.DesignByName(name)
		require.NoError(t, err)
		sym, err := Run(d, Options{Bounds: b, Liveness: true})
		require.NoError(t, err)
		all, err := Run(d, Options{Bounds: b, Liveness: true, NoSymmetry: true})
		require.NoError(t, err)
		require.Len(t, sym.Liveness.Violations, 1, name)
		require.Len(t, all.Liveness.Violations, 1, name)
		s, a := sym.Liveness.Violations[0], all.Liveness.Violations[0]
		requireLasso(t, &d, b, s)
		assert.Len(t, s.Prefix, len(a.Prefix), "%s: prefix", name)
		assert.Len(t, s.Cycle, len(a.Cycle), "%s: cycle", name)
	}
}
