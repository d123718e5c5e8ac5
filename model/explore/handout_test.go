package explore

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
)

// levelOf is n distinct states of the reference design at the
// default bounds (breadth-first from the start), and the expander that
// canonicalized them.
func levelOf(t *testing.T, n int) (*expander, []model.Encoding) {
	t.Helper()
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.DefaultBounds()
	x := newExpander(&d, b, model.NewCanon(&d, b, b.Symmetries(), false))
	init := model.Init(b)
	var e model.Encoding
	x.canon.Encode(&init, &e)
	seen := map[model.Encoding]bool{e: true}
	all := []model.Encoding{e}
	var buf []model.Outcome
	for i := 0; len(all) < n; i++ {
		require.Less(t, i, len(all), "fewer than %d states", n)
		s := all[i].Decode()
		for _, op := range x.alphabet {
			buf = model.StepAppend(buf[:0], x.d, b, &s, op)
			for o := range buf {
				x.canon.Encode(&buf[o].Next, &e)
				if !seen[e] && len(all) < n {
					seen[e] = true
					all = append(all, e)
				}
			}
		}
	}
	return x, all
}

// expandLevel hands every state of a level to merge exactly once, in the
// level's order, whatever the worker count, each chunk expanded (its
// successors counted) and, with parts, inserted before its merge; the
// chunks with more than one worker are cut finer towards the end of the
// level; and once stopped reports true no chunk is merged any more.
func TestExpandLevelHandsOutEveryStateInOrder(t *testing.T) {
	x, want := levelOf(t, 3000)
	for _, workers := range []int{1, 2, 3} {
		for _, n := range []int{0, 1, 31, 33, 700, 3000} {
			name := fmt.Sprintf("%d workers, %d states", workers, n)
			sub := &frontier{}
			for k := range want[:n] {
				sub.push(&want[k])
			}
			x.parts = 0
			if workers > 1 {
				x.parts = workers
			}
			var mu sync.Mutex
			inserted := map[*chunk]int{} // parts that inserted a chunk since its last merge
			insert := func(p int, c *chunk) {
				mu.Lock()
				inserted[c]++
				mu.Unlock()
			}
			var got []model.Encoding
			var sizes []int
			merge := func(c *chunk) {
				if workers > 1 {
					mu.Lock()
					assert.Equal(t, workers, inserted[c], "%s: a chunk merged before every part inserted it", name)
					inserted[c] = 0
					mu.Unlock()
				}
				assert.Len(t, c.counts, len(c.encs), name)
				got = append(got, c.encs...)
				sizes = append(sizes, len(c.encs))
			}
			x.expandLevel(sub, workers, insert, merge, func() bool { return false })
			require.Equal(t, len(want[:n]), len(got), name)
			assert.True(t, n == 0 || assert.ObjectsAreEqual(want[:n], got), "%s: states merged out of order", name)
			left := n
			for _, s := range sizes {
				assert.Equal(t, min(left, chunkSize(left, workers)), s, "%s: chunk sizes", name)
				left -= s
			}

			merged := 0
			x.expandLevel(sub, workers, insert, func(c *chunk) { merged++ }, func() bool { return merged >= 2 })
			assert.Equal(t, min(2, len(sizes)), merged, "%s: merged after stop", name)
		}
	}
	// The tail: with 2 workers a level's last chunks shrink to an eighth.
	assert.Equal(t, chunkStates, chunkSize(100000, 2))
	assert.Equal(t, 6*chunkStates/8, chunkSize(6*chunkStates, 2))
	assert.Equal(t, chunkStates/8, chunkSize(40, 2))
	assert.Equal(t, chunkStates, chunkSize(40, 1))
}
