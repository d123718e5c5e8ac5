package cache

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHandleTableMatchesMap adds entries in id order (with ids skipped, as
// entries made and never added leave them) and removes random ones, on a
// handleTable and on the map it replaced, comparing every id, the length
// and what all yields. Some entries live on through the whole run while
// many newer ones come and go: the table's size must stay proportional to
// the live entries, not to the ids made.
func TestHandleTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tb handleTable
	ref := map[uint64]*entry{}
	var live []uint64
	id := uint64(0)
	for step := range 60000 {
		if rng.IntN(2) == 0 || len(live) <= 3 {
			id += 1 + uint64(rng.IntN(2))
			e := &entry{id: id}
			tb.add(e)
			ref[id] = e
			live = append(live, id)
		} else {
			// Never the first three: they live through the run.
			i := 3 + rng.IntN(len(live)-3)
			tb.remove(live[i])
			delete(ref, live[i])
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
		}
		require.Equal(t, len(ref), tb.len())
		require.LessOrEqual(t, len(tb.slots)+len(tb.old), 4*len(ref)+1024, "step %d", step)
		if step%4999 != 0 {
			continue
		}
		for i := uint64(0); i <= id+1; i++ {
			require.Same(t, ref[i], tb.get(i), "id %d", i)
		}
		n := 0
		for i, e := range tb.all() {
			require.Same(t, ref[i], e)
			n++
		}
		require.Equal(t, len(ref), n)
	}
	for _, i := range live {
		tb.remove(i)
	}
	require.Zero(t, tb.len())
	require.Empty(t, tb.slots)
	require.Empty(t, tb.old)
}
