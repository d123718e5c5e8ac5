package explore

import (
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worker that has expanded the chunk next in the level's order inserts
// and merges it (and hands it out again) before it expands another, so that
// the merge keeps up while the workers work, instead of running only once
// every chunk of the pool is expanded. On one core (GOMAXPROCS 1) the
// median merge finds at most two chunks expanded and not merged, its own
// included; a worker that merged only when no chunk was left to expand
// expanded the whole pool (six chunks) first, and the median merge found
// three.
func TestWorkerLetsTheMergeRunAfterEachChunk(t *testing.T) {
	x, states := levelOf(t, 3000)
	level := &frontier{}
	for k := range states {
		level.push(&states[k])
	}
	x.parts = 2
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var ahead []int
	merged := map[chan struct{}]bool{} // a chunk's ready is new each time it is handed out
	merge := func(c *chunk) {
		n := 0
		for _, o := range x.chunks {
			select {
			case <-o.ready:
				if !merged[o.ready] {
					n++
				}
			default:
			}
		}
		merged[c.ready] = true
		ahead = append(ahead, n)
	}
	x.expandLevel(level, 2, func(int, *chunk) {}, merge, func() bool { return false })
	require.Greater(t, len(ahead), len(x.chunks), "a level of fewer chunks than the pool")
	sorted := slices.Sorted(slices.Values(ahead))
	assert.LessOrEqual(t, sorted[len(sorted)/2], 2, "chunks expanded and not merged at each merge: %v", ahead)
}
