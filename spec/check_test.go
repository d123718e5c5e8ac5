package spec

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// naiveOverlap is the quadratic definition checkNoOverlap must agree with.
func naiveOverlap(entries []Entry) bool {
	for i := range entries {
		for j := range i {
			if rangesOverlap(entries[i].Offset, entries[i].Size, entries[j].Offset, entries[j].Size) {
				return true
			}
		}
	}
	return false
}

func TestCheckNoOverlapMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := range 20000 {
		n := 1 + rng.IntN(8)
		entries := make([]Entry, n)
		for i := range entries {
			entries[i].Offset = uint64(rng.IntN(12)) * 4096
			switch rng.IntN(4) {
			case 0:
				entries[i].Size = 0
			case 1:
				entries[i].Size = uint64(1 + rng.IntN(4096))
			default:
				entries[i].Size = uint64(1 + rng.IntN(5*4096))
			}
		}
		// Any bound at least the largest End will do (the parsers pass the
		// file size or index_start).
		var bound uint64
		for _, e := range entries {
			bound = max(bound, e.End())
		}
		bound += uint64(rng.IntN(3)) * 4096
		a, b := checkNoOverlap(entries, 4096, bound)
		want := naiveOverlap(entries)
		require.Equal(t, want, a >= 0, "iteration %d: %+v", iter, entries)
		if want {
			require.True(t, a != b && b >= 0, "iteration %d: pair %d %d", iter, a, b)
			require.True(t, rangesOverlap(entries[a].Offset, entries[a].Size, entries[b].Offset, entries[b].Size),
				"iteration %d: reported pair %d %d does not overlap: %+v", iter, a, b, entries)
		}
	}
}

func TestCheckUniqueNamesMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	alphabet := []string{"a", "b", "ab", "ba", "layers.0.w", "layers.1.w", "x", "", "layers.0.attention.wq.weight"}
	for iter := range 5000 {
		// Small sets from a small alphabet repeat often; larger ones (past
		// the table's batch of 16) draw from a generated alphabet so that a
		// duplicate can come late, after many insertions.
		n := rng.IntN(12)
		names := alphabet
		if iter%2 == 1 {
			n = rng.IntN(200)
			names = make([]string, 2*n+1)
			for i := range names {
				names[i] = "layers." + itoa(i) + ".w"
			}
		}
		entries := make([]Entry, n)
		for i := range entries {
			entries[i].Key.Weight = names[rng.IntN(len(names))]
		}
		want := -1
		seen := map[string]bool{}
		for i, e := range entries {
			if seen[e.Key.Weight] {
				want = i
				break
			}
			seen[e.Key.Weight] = true
		}
		got := checkUniqueNames(entries, func(e *Entry) string { return e.Key.Weight })
		require.Equal(t, want, got, "iteration %d", iter)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
