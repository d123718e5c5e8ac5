package explore

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
