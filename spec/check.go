package spec

import (
	"fmt"
	"math/bits"
)

// checkUniqueNames reports the index of the first entry whose name repeats
// an earlier one, or -1. It uses an open-addressing table of uint32 slots
// (load factor at most 1/2) instead of a map[string]: at a million entries a
// Go map costs several times the index size and most of the parse time.
// While entry numbers fit in 24 bits, each slot also keeps 8 bits of the
// hash, so a probe that meets another name almost never has to fetch that
// entry to compare strings (the cache misses were the cost). The hash is
// CRC32C: hardware, and deterministic (a randomly seeded hash would make the
// parser's coverage vary between runs of one input, which misleads the
// fuzzer).
func checkUniqueNames(entries []Entry, name func(*Entry) string) int {
	n := len(entries)
	if n < 2 {
		return -1
	}
	size := 1
	for size < 2*n {
		size <<= 1
	}
	mask := uint32(size - 1)
	table := make([]uint32, size) // 0 = empty
	tagged := n < 1<<24
	for i := range entries {
		s := name(&entries[i])
		h := crcString(s)
		slot, want := uint32(i+1), uint32(0)
		if tagged {
			want = h >> 24 << 24
			slot |= want
		}
		for p := h & mask; ; p = (p + 1) & mask {
			v := table[p]
			if v == 0 {
				table[p] = slot
				break
			}
			if tagged {
				if v&0xFF000000 != want {
					continue
				}
				v &= 0xFFFFFF
			}
			if name(&entries[v-1]) == s {
				return i
			}
		}
	}
	return -1
}

// checkNoOverlap reports two entries whose data ranges share a byte, or
// (-1, -1). Every data offset is a multiple of unit (checked before), so two
// ranges overlap exactly when one's start lies strictly inside the other or
// both start at the same place. A bitmap of start units finds that in one
// pass plus a scan of each range: no sort (ExecuTorch writes hash-map order)
// and size/unit/8 bytes of memory, a small fraction of the file. A range is
// scanned only up to the first start it contains, and ranges containing no
// start are disjoint, so scanning costs at most the data area's bits.
// Empty ranges overlap nothing and are skipped.
func checkNoOverlap(entries []Entry, unit uint64) (int, int) {
	var maxEnd uint64
	for i := range entries {
		maxEnd = max(maxEnd, entries[i].End())
	}
	units := maxEnd/unit + 1
	starts := make([]uint64, (units+63)/64)
	for i := range entries {
		e := &entries[i]
		if e.Size == 0 {
			continue
		}
		u := e.Offset / unit
		if starts[u/64]&(1<<(u%64)) != 0 {
			return firstAt(entries, e.Offset, i), i
		}
		starts[u/64] |= 1 << (u % 64)
	}
	for i := range entries {
		e := &entries[i]
		if e.Size == 0 {
			continue
		}
		lo := e.Offset/unit + 1           // first unit after its own start
		hi := (e.End() + unit - 1) / unit // one past its last unit
		if u, ok := firstSet(starts, lo, hi); ok {
			return i, firstAt(entries, u*unit, -1)
		}
	}
	return -1, -1
}

// firstAt finds the non-empty entry starting at off, other than skip. Only
// the error path calls it.
func firstAt(entries []Entry, off uint64, skip int) int {
	for i := range entries {
		if i != skip && entries[i].Size > 0 && entries[i].Offset == off {
			return i
		}
	}
	return -1
}

// firstSet returns the first set bit in [lo, hi) of bm.
func firstSet(bm []uint64, lo, hi uint64) (uint64, bool) {
	for lo < hi {
		w := bm[lo/64] >> (lo % 64)
		if w != 0 {
			u := lo + uint64(bits.TrailingZeros64(w))
			return u, u < hi
		}
		lo = (lo/64 + 1) * 64
	}
	return 0, false
}

// rangesOverlap reports whether [a, a+alen) and [b, b+blen) share a byte.
// Callers have already ruled out overflow of both ends.
func rangesOverlap(a, alen, b, blen uint64) bool {
	return alen > 0 && blen > 0 && a < b+blen && b < a+alen
}

// overlapErr names the two entries (by index position) whose data overlap.
func overlapErr(a, b int) error {
	return fmt.Errorf("%w: entries %d and %d", ErrOverlap, a, b)
}
