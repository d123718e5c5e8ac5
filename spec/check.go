package spec

import (
	"cmp"
	"fmt"
	"slices"
)

// checkUniqueNames reports the index of the first entry whose name repeats
// an earlier one, or -1. It uses an open-addressing table of uint32 entry
// numbers (4 bytes per slot, load factor at most 1/2) instead of a
// map[string]: at a million entries a Go map costs several times the index
// size and most of the parse time. The hash is CRC32C (hardware, and
// deterministic: a randomly seeded hash would make the parser's coverage
// vary between runs of one input, which misleads the fuzzer).
func checkUniqueNames(entries []Entry, name func(*Entry) string) int {
	n := len(entries)
	if n < 2 {
		return -1
	}
	size := 1
	for size < 2*n {
		size <<= 1
	}
	mask := uint64(size - 1)
	table := make([]uint32, size) // 0 = empty, else entry number + 1
	for i := range entries {
		s := name(&entries[i])
		h := uint64(crcString(s)) & mask
		for {
			j := table[h]
			if j == 0 {
				table[h] = uint32(i + 1)
				break
			}
			if name(&entries[j-1]) == s {
				return i
			}
			h = (h + 1) & mask
		}
	}
	return -1
}

// span is a data range tagged with the entry it belongs to.
type span struct {
	off, end uint64
	i        int
}

// checkNoOverlap reports a pair of entries whose data ranges overlap, or
// (-1, -1). Writers emit entries in offset order, so the common case is one
// linear pass; only an unordered index (ExecuTorch writes hash-map order)
// pays for a sort.
func checkNoOverlap(entries []Entry) (int, int) {
	sorted := true
	for i := 1; i < len(entries); i++ {
		if entries[i].Offset < entries[i-1].Offset {
			sorted = false
			break
		}
	}
	if sorted {
		var prevEnd uint64
		prev := -1
		for i := range entries {
			e := &entries[i]
			if e.Size == 0 {
				continue // an empty range overlaps nothing
			}
			if prev >= 0 && e.Offset < prevEnd {
				return prev, i
			}
			if e.End() > prevEnd || prev < 0 {
				prevEnd, prev = e.End(), i
			}
		}
		return -1, -1
	}
	spans := make([]span, 0, len(entries))
	for i := range entries {
		if entries[i].Size > 0 {
			spans = append(spans, span{entries[i].Offset, entries[i].End(), i})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.off, b.off) })
	for k := 1; k < len(spans); k++ {
		if spans[k].off < spans[k-1].end {
			return spans[k-1].i, spans[k].i
		}
	}
	return -1, -1
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
