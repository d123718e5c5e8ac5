package explore

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Counting the liveness graph's sources by their top byte as the search
// writes them, then into the index's runs (countTops), counts each run as
// counting the sources one by one does, whatever the runs' width (a small
// graph has fewer than 256 runs).
func TestCountTopsIsCount(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 5, 17, 100, 700, 5000} {
		var tops [256]uint32
		one := newFPIndex(n)
		for range n {
			fp := r.Uint64()
			tops[fp>>56]++
			one.count(fp)
		}
		byTop := newFPIndex(n)
		byTop.countTops(&tops)
		assert.Equal(t, one.top, byTop.top, "%d sources, %d runs", n, 1<<byTop.topBits)
	}
}
