package spec

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"
)

// checkUniqueNames reports the index of the first entry whose name repeats
// an earlier one, or -1. It uses an open-addressing table of uint32 slots
// (load factor at most 1/2) instead of a map[string]: at a million entries a
// Go map costs several times the index size and most of the parse time.
// While entry numbers fit in 24 bits, each slot also keeps 8 bits of the
// hash, so a probe that meets another name almost never has to fetch that
// entry to compare strings.
//
// At a million entries the table (8 MiB) is larger than the caches and each
// insertion's first probe is a memory miss. Entries are therefore hashed in
// batches and the first probe slot of every entry in a batch is loaded
// before any is inserted: the loads are independent, so their misses
// overlap instead of being paid one after another.
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
	const batch = 16
	var hs [batch]uint64
	var first [batch]uint32
	for base := 0; base < n; base += batch {
		k := min(batch, n-base)
		for j := range k {
			hs[j] = nameHash(name(&entries[base+j]))
		}
		for j := range k {
			first[j] = table[uint32(hs[j])&mask]
		}
		for j := range k {
			i := base + j
			h := hs[j]
			slot, want := uint32(i+1), uint32(0)
			if tagged {
				want = uint32(h>>56) << 24
				slot |= want
			}
			p := uint32(h) & mask
			// A slot is written once and never changed, so table[p] is
			// first[j] unless an insertion of this batch filled it since;
			// or-ing the two reads the truth and keeps the early load live.
			v := first[j] | table[p]
			for {
				if v == 0 {
					table[p] = slot
					break
				}
				other := v
				if tagged {
					other = v & 0xFFFFFF
					if v&0xFF000000 != want {
						other = 0 // another hash: no need to compare
					}
				}
				if other != 0 && name(&entries[other-1]) == name(&entries[i]) {
					return i
				}
				p = (p + 1) & mask
				v = table[p]
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
// Empty ranges overlap nothing and are skipped. bound is at least every
// entry's End (the parsers have checked it: the file size, or v2's
// index_start), which spares a pass over a million entries to find the
// largest; the bitmap is then bound/unit/8 bytes, a fraction of the real
// file (G7).
func checkNoOverlap(entries []Entry, unit, bound uint64) (int, int) {
	units := bound/unit + 1
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

// nameHash is the hash of the duplicate-name table: a multiply-xorshift
// over 8-byte little-endian words, a few cycles for a typical tensor name
// where a CRC32C call cost 20 ns. It is deterministic (a randomly seeded
// hash would make the parser's coverage vary between runs of one input,
// which misleads the fuzzer) and its high and low bits are both mixed: the
// low ones pick the slot, the top byte is the slot's tag.
func nameHash(s string) uint64 {
	const m1, m2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	h := uint64(len(s)) * m1
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * m1
		h ^= h >> 32
		b = b[8:]
	}
	if len(b) > 0 {
		var w uint64
		for i, c := range b {
			w |= uint64(c) << (8 * i)
		}
		h = (h ^ w) * m1
		h ^= h >> 32
	}
	h ^= h >> 29
	h *= m2
	return h ^ h>>32
}
