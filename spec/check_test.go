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

// TestSortedOverlapMatchesBitmap: the check a startMap makes without a
// bitmap (bounds over maxStartBitmap, such as sparse files) reports the
// same pair as the bitmap, not only the same verdict.
func TestSortedOverlapMatchesBitmap(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	for iter := range 20000 {
		entries := make([]Entry, 1+rng.IntN(10))
		for i := range entries {
			entries[i].Offset = uint64(rng.IntN(16)) * 4096
			if rng.IntN(5) > 0 {
				entries[i].Size = uint64(1 + rng.IntN(4*4096))
			}
		}
		bound := uint64(32 * 4096)
		bitmap := newStartMap(4096, bound)
		sorted := newStartMapLimit(4096, bound, 0)
		require.NotNil(t, bitmap.starts)
		require.Nil(t, sorted.starts)
		for i := range entries {
			bitmap.add(entries, &entries[i])
			sorted.add(entries, &entries[i])
		}
		a, b := bitmap.overlap(entries)
		c, d := sorted.overlap(entries)
		require.Equal(t, [2]int{a, b}, [2]int{c, d}, "iteration %d: %+v", iter, entries)
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
		name := func(e *Entry) string { return e.Key.Weight }
		require.Equal(t, want, checkUniqueNames(entries, name), "iteration %d", iter)
		// Fed one entry at a time, as the parsers do.
		ns := newNameSet(uint64(len(entries)), name)
		for i := range entries {
			ns.add([]byte(entries[i].Key.Weight))
		}
		require.Equal(t, want, ns.firstDup(entries), "iteration %d, incremental", iter)
		// The partitioned strategy, used from partitionMin entries on.
		require.Equal(t, want, checkUniqueNamesFrom(entries, name, 2), "iteration %d, partitioned", iter)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestCheckUniqueNamesPartitioned: sets large enough to be split into
// several buckets, with groups of equal names whose members are far apart
// and arrive in any order; the answer is the first entry that repeats an
// earlier name, as with the direct table.
func TestCheckUniqueNamesPartitioned(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 13))
	for iter := range 200 {
		n := 2048 + rng.IntN(6000)
		entries := make([]Entry, n)
		for i := range entries {
			entries[i].Key.Weight = "layers." + itoa(i) + ".attention.wq.weight"
		}
		want := -1
		if iter%3 != 0 {
			// Groups of two to five equal names, anywhere: the partition
			// reorders a bucket, so the group's members are met in any
			// order.
			for range 1 + rng.IntN(4) {
				a := rng.IntN(n)
				for range 1 + rng.IntN(4) {
					entries[rng.IntN(n)].Key.Weight = entries[a].Key.Weight
				}
			}
			seen := map[string]bool{}
			for i, e := range entries {
				if seen[e.Key.Weight] {
					want = i
					break
				}
				seen[e.Key.Weight] = true
			}
		}
		name := func(e *Entry) string { return e.Key.Weight }
		require.Equal(t, want, checkUniqueNamesFrom(entries, name, 2), "iteration %d", iter)
		require.Equal(t, want, checkUniqueNamesFrom(entries, name, n+1), "iteration %d, direct", iter)
	}
}

// TestNameHashEveryByteCounts: for every length up to 100 bytes, changing
// any one byte changes the hash (the word-wise reads cover every byte, with
// no read past the end), and the hash is a function of the bytes alone.
func TestNameHashEveryByteCounts(t *testing.T) {
	for n := range 101 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + i%26)
		}
		h := nameHash(b)
		require.Equal(t, h, nameHash(append([]byte(nil), b...)), "length %d", n)
		for i := range b {
			b[i] ^= 1
			require.NotEqual(t, h, nameHash(b), "length %d, byte %d", n, i)
			b[i] ^= 1
		}
		if n > 0 {
			require.NotEqual(t, h, nameHash(b[:n-1]), "length %d vs %d", n, n-1)
		}
	}
}
