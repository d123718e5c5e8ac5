package spec

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
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
		require.NotZero(t, bitmap.words)
		require.Zero(t, sorted.words)
		for i := range entries {
			bitmap.add(entries, i)
			sorted.add(entries, i)
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
		name := weightName
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
		name := weightName
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

// TestNamePairHashEveryByteAndSplitCounts: for both parts of every length
// up to 40 bytes, changing any one byte of either changes the hash, and
// every split of one 60-byte string between the two parts hashes apart.
func TestNamePairHashEveryByteAndSplitCounts(t *testing.T) {
	const seed = 0x1234
	for nw := range 41 {
		for nb := range 41 {
			w, b := make([]byte, nw), make([]byte, nb)
			for i := range w {
				w[i] = byte('a' + i%26)
			}
			for i := range b {
				b[i] = byte('A' + i%26)
			}
			h := NamePairHash(seed, w, b)
			for _, part := range [][]byte{w, b} {
				for i := range part {
					part[i] ^= 1
					require.NotEqual(t, h, NamePairHash(seed, w, b), "lengths %d+%d, byte %d of %q", nw, nb, i, part)
					part[i] ^= 1
				}
			}
		}
	}
	s := []byte(strings.Repeat("blk.17.ffn_gate.weight", 3)[:60])
	seen := map[uint64]int{}
	for i := range len(s) + 1 {
		h := NamePairHash(seed, s[:i], s[i:])
		if j, dup := seen[h]; dup {
			t.Fatalf("splits at %d and %d hash alike", j, i)
		}
		seen[h] = i
	}
}

// distinctNames returns n entries with distinct weight names, and the kind
// of name the check tests use.
func distinctNames(n int) ([]Entry, nameOf) {
	entries := make([]Entry, n)
	for i := range entries {
		entries[i].Key.Weight = "layers." + itoa(i) + ".attention.wq.weight"
	}
	return entries, weightName
}

// TestNameSetStrategy: a nameSet partitions from partitionMin entries on
// (below, its direct table stays small) up to 2^32-1, whose entry numbers
// fit the 32 bits a pair keeps, and picks about 1024 entries per bucket, at
// most 2^16 buckets (the bucket counts stay at most 512 KiB whatever a
// forged count says).
func TestNameSetStrategy(t *testing.T) {
	_, name := distinctNames(0)
	for _, count := range []uint64{0, 2, partitionMin - 1, partitionMin, 1<<16 - 1, 1 << 16, 1<<26 - 1, 1 << 26, math.MaxUint32, math.MaxUint32 + 1} {
		s := newNameSet(count, name)
		partitioned := count >= partitionMin && count <= math.MaxUint32
		require.Equal(t, partitioned, s.hs32 != nil, "count %d", count)
		// What is allocated before any name is added does not grow with
		// the declared count (G7).
		require.LessOrEqual(t, cap(s.hs32), preallocEntries, "count %d", count)
		if !partitioned {
			require.Nil(t, s.counts, "count %d", count)
			continue
		}
		nb := uint64(len(s.counts))
		require.Equal(t, 1, bits.OnesCount64(nb), "count %d: %d buckets", count, nb)
		if nb < 1<<16 {
			require.True(t, count/nb >= 512 && count/nb < 1024, "count %d: %d buckets", count, nb)
		} else {
			require.GreaterOrEqual(t, count/nb, uint64(512), "count %d", count)
		}
	}
}

// TestNameSetTableBytes: what the duplicate-name check allocates once all
// names are added, to the byte. The direct table is one uint16 slot per
// power-of-two position, the fewest at load factor at most 3/4 (n = 24,
// 96, 1536 and 24576 fill it exactly to 3/4; a table of 32 bytes or less
// may live on the stack, so none is that small); the partitioned check's
// bucket table has the fewest power-of-two slots at load at most 1/2 for the
// largest bucket (one bucket of 256 here). And a whole check of
// partitionMin names, as ParseV3 promises, costs at most 20 bytes a name.
func TestNameSetTableBytes(t *testing.T) {
	// The least of three runs: the first call of a function can allocate
	// once for the runtime's own needs.
	least := func(f func()) uint64 {
		m := AllocatedBytes(f)
		for range 2 {
			m = min(m, AllocatedBytes(f))
		}
		return m
	}
	fewest := func(n, num, den int) int { // smallest power of two >= n*num/den
		return 1 << bits.Len(uint((n*num+den-1)/den-1))
	}
	for _, n := range []int{24, 25, 96, 97, 1184, 1536, 1537, 24576, partitionMin - 1} {
		entries, name := distinctNames(n)
		s := newNameSet(uint64(n), name)
		for i := range entries {
			s.add([]byte(name.of(&entries[i])))
		}
		dup := 0
		got := least(func() { dup = s.firstDup(entries) })
		require.Equal(t, -1, dup)
		require.Equal(t, 2*uint64(max(4, fewest(n, 4, 3))), got, "direct table, %d names", n)
	}
	require.Equal(t, 2048, fewest(1184, 4, 3), "a 1,184-entry index needs a 4 KiB table")

	entries, name := distinctNames(256)
	s := newNameSetFrom(256, name, 2)
	for i := range entries {
		s.add([]byte(name.of(&entries[i])))
	}
	require.Len(t, s.counts, 1)
	dup := 0
	got := least(func() { dup = s.firstDup(entries) })
	require.Equal(t, -1, dup)
	// The pairs, the bucket table, and one bucket's start (8 bytes, which
	// may share a 16-byte block with another small allocation).
	want := uint64(8*256 + 4*fewest(2*256, 1, 1))
	require.True(t, got >= want && got <= want+16, "partitioned, 256 names in one bucket: %d bytes, want %d", got, want)

	// A whole partitioned check, fed as the parsers feed it: each name's
	// hash (the preallocated buffer, then one of at most half again the
	// count for the allocator's rounding), the (hash, entry) pairs, two
	// ints a bucket, and the bucket table; at most 20 bytes a name.
	const n = partitionMin
	entries, name = distinctNames(n)
	got = least(func() {
		s = newNameSet(n, name)
		for i := range entries {
			s.add([]byte(name.of(&entries[i])))
		}
		dup = s.firstDup(entries)
	})
	require.Equal(t, -1, dup)
	largest := slices.Max(s.counts)
	want = 4*(preallocEntries+n*3/2) + 8*n + 16*uint64(len(s.counts)) + 4*uint64(fewest(2*largest, 1, 1)) + 256
	require.LessOrEqual(t, got, want, "%d names, largest bucket %d", n, largest)
	require.LessOrEqual(t, got, uint64(20*n), "%d names: %d bytes", n, got)
	t.Logf("%d names: %d bytes, %.1f a name; bound %d", n, got, float64(got)/n, want)
}

// TestStartMapBitmapLimit: the overlap check's bitmap is at most
// maxStartBitmap, one bit per page of a 128 GiB data area at 4 KiB pages;
// a bound one page larger is checked by sorting and allocates no bitmap
// (memory per entry decoded, not per byte declared, G7).
func TestStartMapBitmapLimit(t *testing.T) {
	const pages = maxStartBitmap * 8 // units a full bitmap covers: 0 .. pages-1
	require.Equal(t, uint64(128<<30), uint64(pages)*4096)
	var m *startMap
	got := AllocatedBytes(func() { m = newStartMap(4096, (pages-1)*4096) })
	require.Equal(t, uint64(maxStartBitmap/8), m.words)
	require.Less(t, got, uint64(64<<10), "no bitmap before an entry out of order")
	got = AllocatedBytes(func() { m.makeBitmap(nil) })
	require.LessOrEqual(t, got, uint64(maxStartBitmap+4096))
	got = AllocatedBytes(func() { m = newStartMap(4096, pages*4096); m.makeBitmap(nil) })
	require.Zero(t, len(m.starts), "a bitmap one page past the limit")
	require.Less(t, got, uint64(4096))
}

// TestOverlapAtWordAndRangeEdges: the overlap check at the edges its random
// tests seldom reach. A start found in a later bitmap word than the range's
// own start; a range in the very last unit of a bitmap whose unit count is
// a multiple of 64 (nothing may be read past the bitmap); and ranges that
// end exactly where the next begins, which do not overlap, by bitmap and by
// sorting alike.
func TestOverlapAtWordAndRangeEdges(t *testing.T) {
	const page = 4096
	for _, limit := range []uint64{maxStartBitmap, 0} { // bitmap, sorted
		for _, tc := range []struct {
			name    string
			entries []Entry
			bound   uint64
			a, b    int
		}{
			{"start in a later word", []Entry{{Offset: 0, Size: 100 * page}, {Offset: 70 * page, Size: 1}}, 128 * page, 0, 1},
			{"start in a later word, unordered", []Entry{{Offset: 70 * page, Size: 1}, {Offset: 0, Size: 100 * page}}, 128 * page, 1, 0},
			{"last unit of a 64-unit bitmap", []Entry{{Offset: 0, Size: 1}, {Offset: 63 * page, Size: 1}}, 64*page - 1, -1, -1},
			{"adjacent ranges", []Entry{{Offset: 0, Size: page}, {Offset: page, Size: 2 * page}, {Offset: 3 * page, Size: page}}, 4 * page, -1, -1},
			{"adjacent, unordered", []Entry{{Offset: 3 * page, Size: page}, {Offset: page, Size: 2 * page}, {Offset: 0, Size: page}}, 4 * page, -1, -1},
		} {
			m := newStartMapLimit(page, tc.bound, limit)
			require.Equal(t, limit > 0, m.words > 0, tc.name)
			for i := range tc.entries {
				m.add(tc.entries, i)
			}
			a, b := m.overlap(tc.entries)
			require.Equal(t, [2]int{tc.a, tc.b}, [2]int{a, b}, "%s, limit %d", tc.name, limit)
		}
	}
}
