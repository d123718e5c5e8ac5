package explore

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/xpwc/xpwc/model"
)

// The expander's chunks are made on first use and kept from level to level
// (their slices grow to a level's widest states once): asking for n chunks
// makes no more than n, and asks after it get the same chunks back.
func TestChunkPoolMakesOnlyWhatIsAsked(t *testing.T) {
	x := &expander{}
	three := x.chunkPool(3)
	assert.Len(t, three, 3)
	assert.Len(t, x.chunks, 3, "chunks made beyond the three asked for")
	two := x.chunkPool(2)
	assert.Equal(t, three[:2], two)
	four := x.chunkPool(4)
	assert.Len(t, x.chunks, 4)
	assert.Equal(t, three, four[:3], "the kept chunks are handed out again")
}

// With more than one worker a level of a few chunks is cut finer, so that
// every worker has some of it: a level that one worker expands as one
// chunk reaches the merge in several, and in the level's order.
func TestFewChunksAreCutForEveryWorker(t *testing.T) {
	d := model.Designs()[0]
	b := livenessBounds
	x := newExpander(&d, b, model.NewCanon(&d, b, 0, true))
	init := model.Init(b)
	level := &frontier{}
	for range chunkStates {
		var e model.Encoding
		x.canon.Encode(&init, &e)
		level.push(&e)
	}
	for _, workers := range []int{1, 2} {
		var sizes []int
		x.expandLevel(level, workers, nil, func(c *chunk) { sizes = append(sizes, len(c.counts)) }, func() bool { return false })
		total := 0
		for _, n := range sizes {
			total += n
		}
		assert.Equal(t, chunkStates, total, "%d workers: every state merged once", workers)
		if workers == 1 {
			assert.Len(t, sizes, 1, "one worker takes the level whole")
		} else {
			assert.GreaterOrEqual(t, len(sizes), workers, "%d workers: a chunk for each", workers)
		}
	}
}

// A fingerprint's part is its low bits (which neither visited set uses to
// place it); 0 and 1 are one fingerprint, so one part.
func TestPartOfIsTheLowBits(t *testing.T) {
	for fp, want := range map[uint64]int{0: 1, 1: 1, 2: 2, 3: 0, 0xffff_0000_0000_0004: 1, 0x1_0005: 2} {
		assert.Equal(t, want, partOf(fp, 3), "%#x", fp)
	}
}
