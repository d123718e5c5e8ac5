package spec

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStartMapInOrderMatchesEagerBitmap: a startMap makes its bitmap only
// at the first entry out of file order; it reports the pair a bitmap made
// before the first entry reports, for indexes in order up to a random
// point and random after it (and by sorting, where no bitmap is allowed).
func TestStartMapInOrderMatchesEagerBitmap(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 29))
	const page = 4096
	for iter := range 20000 {
		entries := make([]Entry, 1+rng.IntN(12))
		inOrder := rng.IntN(len(entries) + 1)
		var off uint64
		for i := range entries {
			e := &entries[i]
			if rng.IntN(5) > 0 {
				e.Size = uint64(1 + rng.IntN(3*page))
			}
			if i < inOrder {
				off += uint64(rng.IntN(2)) * page // gaps or none
				e.Offset = off
				off += (e.Size + page - 1) / page * page
				continue
			}
			e.Offset = uint64(rng.IntN(40)) * page
		}
		bound := uint64(80 * page)
		for _, limit := range []uint64{maxStartBitmap, 0} {
			lazy := newStartMapLimit(page, bound, limit)
			for i := range entries {
				lazy.add(entries, i)
			}
			want := [2]int{-1, -1}
			if limit > 0 {
				e := newStartMap(page, bound)
				e.inOrder = false
				e.makeBitmap(nil)
				for i := range entries {
					e.add(entries, i)
				}
				want[0], want[1] = e.overlap(entries)
			} else {
				want[0], want[1] = sortedOverlap(entries)
			}
			a, b := lazy.overlap(entries)
			require.Equal(t, want, [2]int{a, b}, "iteration %d, limit %d: %+v", iter, limit, entries)
			require.Equal(t, naiveOverlap(entries), a >= 0, "iteration %d: %+v", iter, entries)
		}
	}
}

// TestStartMapInOrderAllocatesNothing: the overlap check of an index in
// file order (as xpwc writes it) touches no bitmap: a warm load's fresh
// pages are its cost on a machine whose first touches trap.
func TestStartMapInOrderAllocatesNothing(t *testing.T) {
	const page = 4096
	entries := make([]Entry, 1184)
	for i := range entries {
		entries[i] = Entry{Offset: uint64(i) * 2 * page, Size: page + 1}
	}
	m := newStartMap(page, uint64(len(entries))*2*page)
	got := AllocatedBytes(func() {
		for i := range entries {
			m.add(entries, i)
		}
	})
	require.Zero(t, got)
	a, b := m.overlap(entries)
	require.Equal(t, [2]int{-1, -1}, [2]int{a, b})
	require.Nil(t, m.starts)
}
