package explore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
)

// Every worker count visits the same states in the same order: on every
// design, run to the end with liveness, one, two and three workers give
// the same result (counts, depth, violations and covers with their traces,
// the liveness verdict and its lasso), number every state alike (its
// shortest trace, read back from the parent links) and build the same
// liveness graph, step by step; the fingerprint mode with two workers
// gives the same result too. A part of the visited set that inserted a
// chunk out of the level's order, or lost an insert, would number states
// differently or count one twice.
func TestWorkersSameResult(t *testing.T) {
	b := livenessBounds
	b.Kernels = 1
	for _, d := range model.Designs() {
		one, kept, err := run(d, Options{Bounds: b, Liveness: true})
		require.NoError(t, err)
		require.True(t, one.Exhausted && one.Liveness.Checked, d.Name)
		for _, w := range []int{2, 3} {
			name := fmt.Sprintf("%s, %d workers", d.Name, w)
			many, got, err := run(d, Options{Bounds: b, Liveness: true, Workers: w})
			require.NoError(t, err)
			assert.Equal(t, w, many.Workers)
			sameResult(t, one, many, name)
			sameSearch(t, one.States, kept, got, name)
		}
		fp, err := Run(d, Options{Bounds: b, Liveness: true, Workers: 2, Fingerprints: true, TempFiles: newTestTemp(t)})
		require.NoError(t, err)
		sameResult(t, one, fp, d.Name+", fingerprints, 2 workers")
	}
	// Wider levels (hundreds of chunks each) with a depth bound, and the
	// variants' shortest traces.
	b = model.DefaultBounds()
	b.Depth = 9
	for _, name := range []string{"reference", "no-commit-point", "executorch"} {
		d, err := model.DesignByName(name)
		require.NoError(t, err)
		one, kept, err := run(d, Options{Bounds: b})
		require.NoError(t, err)
		counts := []int{2, 3}
		if name == "executorch" {
			counts = append(counts, 300) // more workers than parts (maxParts)
		}
		for _, w := range counts {
			many, got, err := run(d, Options{Bounds: b, Workers: w})
			require.NoError(t, err)
			sameResult(t, one, many, fmt.Sprintf("%s depth 9, %d workers", name, w))
			sameSearch(t, one.States, kept, got, name)
		}
	}
}

// sameResult holds two runs' results equal but for time, worker count and
// the visited set's memory.
func sameResult(t *testing.T, want, got Result, name string) {
	t.Helper()
	want.Seconds, want.Workers, want.VisitedBytes, want.LivenessSeconds = 0, 0, 0, 0
	got.Seconds, got.Workers, got.VisitedBytes, got.LivenessSeconds = 0, 0, 0, 0
	assert.Equal(t, want, got, name)
}

// sameSearch holds two runs in memory to the same numbering of the states
// (each one's shortest trace) and the same liveness graph.
func sameSearch(t *testing.T, states int, want, got searched, name string) {
	t.Helper()
	for i := range int32(states) {
		if !assert.Equal(t, want.links.path(i), got.links.path(i), "%s: state %d", name, i) {
			return
		}
	}
	if want.g == nil {
		assert.Nil(t, got.g, name)
		return
	}
	require.Equal(t, want.g.nodes(), got.g.nodes(), name)
	for v := range want.g.nodes() {
		e, h := want.g.row(v)
		e2, h2 := got.g.row(v)
		require.Equal(t, h-e, h2-e2, "%s: steps of state %d", name, v)
		for k := range h - e {
			require.Equal(t, want.g.to.at(e+k), got.g.to.at(e2+k), "%s: step of state %d", name, v)
			require.Equal(t, want.g.flags.at(e+k), got.g.flags.at(e2+k), "%s: step of state %d", name, v)
		}
	}
}
