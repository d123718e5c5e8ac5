package cache

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// An idSet holds each id once, whatever order they come in and however far
// past its initial room, and yields them in increasing order.
func TestIDSet(t *testing.T) {
	s := newIDSet(10)
	for _, id := range []uint64{5, 1, 64, 700, 5, 63, 1} {
		s.add(id)
	}
	require.Equal(t, []uint64{1, 5, 63, 64, 700}, slices.Collect(s.all()))
	require.Equal(t, 5, s.len())
	require.False(t, s.add(700), "added twice")
	for _, id := range []uint64{0, 2, 62, 65, 699, 701, 1 << 20} {
		require.False(t, s.has(id), "%d", id)
	}
	require.True(t, s.has(64))
	n := 0
	for range s.all() {
		n++
		break
	}
	require.Equal(t, 1, n, "iteration went on after the body stopped it")
}
