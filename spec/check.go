package spec

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"github.com/xpwc/xpwc/internal/rawmem"
	"math"
	"math/bits"
	"slices"
)

// The checks across the entries of an index (unique names, disjoint data)
// are fed one entry at a time by the decoders, right after the entry is
// decoded, while its record and name are still in the cache: a separate
// pass over a million entries re-read 80 MB of Entry and 50 MB of names,
// which cost more than the checks themselves. Their verdicts are asked for
// only after the last entry, so a file with several problems still reports
// them in the order docs/format.md lists the checks.

// partitionMin is the entry count from which a nameSet partitions hashes
// before looking for equal names: its direct table would be 64 KiB or more,
// past the fast caches. It also keeps entry numbers of the direct table in
// 15 bits.
const partitionMin = 1 << 15

// nameSet finds the first entry whose name repeats an earlier one. A Go
// map[string] costs several times the index size and most of the parse
// time at a million entries, so names are hashed (nameHash) and compared
// only when their hashes agree.
//
// Below partitionMin entries it is, once all entries are decoded, one
// open-addressing table of uint16 slots (load factor at most 3/4): the
// entry number plus one, and in the bits it leaves free the top of the
// name's hash, so a probe that meets another name almost never has to fetch
// that entry to compare strings (a 1,184-entry index needs 4 KiB).
//
// From partitionMin entries on, such a table is larger than the caches and
// every insertion is a memory miss (at a million entries that was a third
// of the parse). Instead each entry's 32-bit hash is appended as the entry
// is decoded, while its name is in the cache, and at the end the (hash,
// entry number) pairs are scattered by the hash's top bits into buckets of
// about a thousand (a counting sort: one sequential read, and writes to a
// thousand sequential streams), and each bucket is checked with a small
// table that stays in the L1 cache. That is 12 bytes per entry against the
// direct table's 2 to 4, plus the bucket table, sized for the largest
// bucket: a few KiB, or up to 8 bytes per entry if a forged index puts
// every name in one bucket (its hashes are public). (Partitioning the pairs in place saved 4 bytes
// but chained dependent cache misses and was slower than the direct table;
// inserting into the direct table in batches, loading each batch's first
// probes together so that their misses overlapped, helped less.)
type nameSet struct {
	entries []Entry // set by firstDup
	name    nameOf
	count   uint64

	// Large sets: each entry's 32-bit hash, in entry order; the number of
	// entries per bucket (the top bktBits bits of the hash).
	hs32    []uint32
	bktBits uint
	counts  []int
}

// nameOf says which name of an Entry a nameSet checks: a kind rather than
// a function, so that the check's loops inline it. An indirect call for
// each entry's name cost the check of 1,184 v3 names about 8,000
// instructions (of 184,000).
type nameOf uint8

const (
	weightName nameOf = iota // Key.Weight: a v2 name
	v3Name                   // the stored v3 name, parsedV3Name
)

// of returns e's name.
func (n nameOf) of(e *Entry) string {
	if n == v3Name {
		return parsedV3Name(e)
	}
	return e.Key.Weight
}

// newNameSet prepares the check for count entries, whose names name
// returns. count picks the strategy; the memory grows with the entries
// added, not with count, which a forged index declares (G7).
func newNameSet(count uint64, name nameOf) *nameSet {
	return newNameSetFrom(count, name, partitionMin)
}

// newNameSetFrom is newNameSet with the partitioning threshold as a
// parameter, so tests can run both strategies on small inputs.
func newNameSetFrom(count uint64, name nameOf, partitionFrom int) *nameSet {
	s := &nameSet{name: name, count: count}
	if count >= uint64(min(partitionFrom, partitionMin)) && count <= math.MaxUint32 {
		// About 1024 entries per bucket; at most 16 of the hash's 32 bits
		// pick the bucket, the low ones place an entry in its bucket. The
		// bucket counts are at most 512 KiB whatever count says.
		s.bktBits = uint(max(0, min(bits.Len64(count)-10, 16)))
		s.hs32 = make([]uint32, 0, min(count, preallocEntries))
		s.counts = make([]int, 1<<s.bktBits)
	}
	return s
}

// add records the next entry, whose stored name is b (the name's bytes as
// read, equal to its name). Entries are added in order, each once. It
// inlines to a nil check for a small set, which hashes at the end.
func (s *nameSet) add(b []byte) {
	if s.hs32 != nil {
		s.addHash(b)
	}
}

func (s *nameSet) addHash(b []byte) {
	h := nameHash(b)
	h32 := uint32(h ^ h>>32)
	if len(s.hs32) == cap(s.hs32) {
		// Grown like the decoders' Entries (growEntries), not by
		// append's quarter steps.
		n := min(uint64(entriesGrowth*cap(s.hs32)), s.count)
		s.hs32 = slices.Grow(s.hs32, int(n)-len(s.hs32))
	}
	s.hs32 = append(s.hs32, h32)
	s.counts[uint64(h32)>>(32-s.bktBits)]++
}

// firstDup returns the first of entries whose name repeats an earlier
// one's, or -1, once all of them are added (as many as newNameSet was told).
func (s *nameSet) firstDup(entries []Entry) int {
	s.entries = entries
	switch n := len(s.entries); {
	case s.hs32 != nil:
		return s.partitionedDup()
	case n < partitionMin:
		return s.directDup()
	default:
		// 2^32 entries or more: no index that can be allocated has that
		// many, but a plain map keeps the check correct regardless.
		seen := make(map[string]struct{}, n)
		for i := range s.entries {
			k := s.name.of(&s.entries[i])
			if _, ok := seen[k]; ok {
				return i
			}
			seen[k] = struct{}{}
		}
		return -1
	}
}

// directDup is firstDup for small sets: fewer than partitionMin (2^15)
// entries, so an entry number plus one fits a uint16 slot with at least one
// bit to spare, and the spare bits keep the top of the name's hash as a
// tag. A 1,184-entry index needs a 4 KiB table.
func (s *nameSet) directDup() int {
	n := len(s.entries)
	if n < 2 {
		return -1
	}
	size := 4
	for size*3 < n*4 {
		size <<= 1
	}
	// 0 = empty, else tag<<idxBits | entry number + 1. Plain memory: it
	// once borrowed the read window through unsafe, which saved 4 KiB per
	// parse and no measurable time.
	table := make([]uint16, size)
	idxBits := uint(bits.Len(uint(n)))
	idxMask := uint16(1)<<idxBits - 1
	mask := uint64(size - 1)
	for i := range s.entries {
		name := s.name.of(&s.entries[i])
		h := nameHash(rawmem.StringBytes(name))
		tag := uint16(h>>(48+idxBits)) << idxBits
		p := h & mask
		for v := table[p]; v != 0; v = table[p] {
			// A different tag means a different hash: no need to compare.
			if v&^idxMask == tag && s.name.of(&s.entries[v&idxMask-1]) == name {
				return i
			}
			p = (p + 1) & mask
		}
		table[p] = tag | uint16(i+1)
	}
	return -1
}

// partitionedDup is firstDup for large sets. The scatter is stable, so
// each bucket lists its entries in order, and the first entry of a bucket
// whose name repeats an earlier one there is the bucket's answer; equal
// names share a bucket, so the smallest of those answers is the set's.
func (s *nameSet) partitionedDup() int {
	nb := len(s.counts)
	next := make([]int, nb)
	sum, largest := 0, 0
	for b, c := range s.counts {
		next[b] = sum
		sum += c
		largest = max(largest, c)
	}
	pairs := make([]uint64, len(s.hs32)) // hash<<32 | entry number
	shift := 32 - s.bktBits
	for i, h := range s.hs32 {
		b := uint64(h) >> shift
		pairs[next[b]] = uint64(h)<<32 | uint64(i)
		next[b]++
	}
	size := 1
	for size < 2*largest {
		size <<= 1
	}
	table := make([]uint32, size) // 0 = empty, else position in bucket + 1
	n := len(s.entries)
	best := n
	lo := 0
	for b := range nb {
		bucket := pairs[lo:next[b]]
		lo = next[b]
		best = min(best, bucketDup(bucket, table, s.entries, s.name))
	}
	if best == n {
		return -1
	}
	return best
}

// bucketDup returns the first entry of bucket (hash<<32 | entry number, in
// entry order) whose name repeats an earlier one's, or len(entries) if
// none does, using table as scratch.
func bucketDup(bucket []uint64, table []uint32, entries []Entry, name nameOf) int {
	tsize := 1
	for tsize < 2*len(bucket) {
		tsize <<= 1
	}
	t := table[:tsize]
	clear(t)
	tmask := uint64(tsize - 1)
	for j, x := range bucket {
		p := x >> 32 & tmask
		for v := t[p]; v != 0; v = t[p] {
			y := bucket[v-1]
			if x>>32 == y>>32 && name.of(&entries[uint32(x)]) == name.of(&entries[uint32(y)]) {
				return int(uint32(x))
			}
			p = (p + 1) & tmask
		}
		t[p] = uint32(j + 1)
	}
	return len(entries)
}

// checkUniqueNames is the nameSet check over a whole slice.
func checkUniqueNames(entries []Entry, name nameOf) int {
	return checkUniqueNamesFrom(entries, name, partitionMin)
}

// checkUniqueNamesFrom is checkUniqueNames with newNameSetFrom's threshold.
func checkUniqueNamesFrom(entries []Entry, name nameOf, partitionFrom int) int {
	s := newNameSetFrom(uint64(len(entries)), name, partitionFrom)
	for i := range entries {
		n := name.of(&entries[i])
		s.add(rawmem.StringBytes(n))
	}
	return s.firstDup(entries)
}

// nameHash is the hash of the duplicate-name table, in the manner of
// wyhash: a 64x64->128-bit multiply folds 16 bytes at a time, and the last
// bytes are read as overlapping words rather than one by one, so a typical
// 30-70-byte tensor name costs a handful of multiplies (a CRC32C call cost
// 20 ns). It is deterministic (a randomly seeded hash would make the
// parser's coverage vary between runs of one input, which misleads the
// fuzzer), and its high and low bits are both mixed: the low ones place an
// entry, the high ones tag it or pick its bucket.
func nameHash(b []byte) uint64 { return NameHash(0, b) }

const p0, p1, p2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db, 0x8ebc6af09c88c6e3

// NameHash is the parser's name hash (nameHash is NameHash(0, b)) from a
// seed, for a table whose seed is drawn per process.
func NameHash(seed uint64, b []byte) uint64 {
	le := binary.LittleEndian
	n := len(b)
	h := uint64(n) ^ p0 ^ seed
	var x, y uint64
	switch {
	case n > 16:
		rest := b
		for len(rest) > 16 {
			h = mix(le.Uint64(rest)^p1, le.Uint64(rest[8:])^h)
			rest = rest[16:]
		}
		// The last 16 bytes, which may overlap bytes already mixed.
		x, y = le.Uint64(b[n-16:]), le.Uint64(b[n-8:])
	case n >= 8:
		x, y = le.Uint64(b), le.Uint64(b[n-8:])
	case n >= 4:
		x, y = uint64(le.Uint32(b)), uint64(le.Uint32(b[n-4:]))
	case n > 0:
		x = uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1])
	}
	return mix(p2^uint64(n), mix(x^p1, y^h))
}

// NamePairHash hashes a name given in two parts, w and b, for a table
// whose seed is drawn per process: impl/cache's name index hashes a v3
// key's weight and bias names so. Both lengths are mixed in first, so
// every split of one string between w and b hashes apart. Each part is
// folded as NameHash folds a name, with one finalization for both: two
// NameHash calls, one fed the other's result, cost a warm load of 1,184
// weights (a hash for each entry indexed and each look-up) about
// 28,000 instructions more, and two maphash calls about 136,000 more.
func NamePairHash(seed uint64, w, b []byte) uint64 {
	le := binary.LittleEndian
	h := seed ^ p0 ^ uint64(len(w))<<32 ^ uint64(len(b))
	// w, then b the same way: written out twice, where a loop over the
	// two parts cost more than the second finalization it saves.
	var x, y uint64
	switch n := len(w); {
	case n > 16:
		for rest := w; len(rest) > 16; rest = rest[16:] {
			h = mix(le.Uint64(rest)^p1, le.Uint64(rest[8:])^h)
		}
		x, y = le.Uint64(w[n-16:]), le.Uint64(w[n-8:])
	case n >= 8:
		x, y = le.Uint64(w), le.Uint64(w[n-8:])
	case n >= 4:
		x, y = uint64(le.Uint32(w)), uint64(le.Uint32(w[n-4:]))
	case n > 0:
		x = uint64(w[0])<<16 | uint64(w[n>>1])<<8 | uint64(w[n-1])
	}
	h = mix(x^p1, y^h)
	x, y = 0, 0
	switch n := len(b); {
	case n > 16:
		for rest := b; len(rest) > 16; rest = rest[16:] {
			h = mix(le.Uint64(rest)^p1, le.Uint64(rest[8:])^h)
		}
		x, y = le.Uint64(b[n-16:]), le.Uint64(b[n-8:])
	case n >= 8:
		x, y = le.Uint64(b), le.Uint64(b[n-8:])
	case n >= 4:
		x, y = uint64(le.Uint32(b)), uint64(le.Uint32(b[n-4:]))
	case n > 0:
		x = uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1])
	}
	return mix(p2^uint64(len(w)+len(b)), mix(x^p1, y^h))
}

// mix folds the 128-bit product of a and b to 64 bits.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// startMap finds two entries whose data ranges share a byte. Every data
// offset is a multiple of the unit (checked before an entry is added), so
// two ranges overlap exactly when one's start lies strictly inside the other
// or both start at the same place. A bitmap of start units finds that as
// entries are added plus one scan of each range at the end: no sort
// (ExecuTorch writes hash-map order) and bound/unit/8 bytes of memory, a
// small fraction of the file (G7). A range is scanned only up to the first
// start it contains, and ranges containing no start are disjoint, so the
// scan costs at most the data area's bits. Empty ranges overlap nothing and
// are skipped.
//
// An index whose non-empty ranges come in file order, each starting at or
// after the previous one's end (as xpwc writes them), is disjoint: that is
// checked as entries are added, and the bitmap is made only at the first
// entry out of that order, from the entries before it. A warm load of such
// a file then touches no bitmap page (a fresh page is a page fault, the
// larger part of a warm launch's time on a machine whose first touches
// trap), and the answer is the bitmap's, since the bitmap then sees every
// entry, in order.
type startMap struct {
	shift  uint // log2 of the unit, a power of two
	words  uint64
	starts []uint64 // made at the first entry out of order, if words > 0
	// inOrder: every non-empty range added so far starts at or after the
	// end of the one before it (end).
	inOrder bool
	end     uint64
	sameA   int // first pair found sharing a start, or -1
	sameB   int // set with sameA
}

// maxStartBitmap is the largest bitmap a startMap allocates: 4 MiB, one bit
// per page of a 128 GiB data area at 4 KiB pages. A larger bound is a file
// that is sparse or forged (or larger than any weights cache), and is
// checked by sorting the starts instead, which costs memory per entry
// decoded rather than per byte declared (G7).
const maxStartBitmap = 4 << 20

// newStartMap prepares the check for entries aligned to unit (a power of
// two) that all end at or before bound (the parsers check that first: the
// file size, or v2's index_start).
func newStartMap(unit, bound uint64) *startMap {
	return newStartMapLimit(unit, bound, maxStartBitmap)
}

// newStartMapLimit is newStartMap with the bitmap limit, in bytes, as a
// parameter, so tests can run both strategies on small inputs.
func newStartMapLimit(unit, bound, limit uint64) *startMap {
	shift := uint(bits.TrailingZeros64(unit))
	m := &startMap{shift: shift, sameA: -1, inOrder: true}
	if words := (bound>>shift + 1 + 63) / 64; words <= limit/8 {
		m.words = words
	}
	return m
}

// add records the start of entries[i], whose range the caller has checked
// to be aligned and to end at or before the bound; entries[:i] are the
// entries added before it, in order. It inlines the common case, a
// non-empty range in file order (sameA is set only once out of order).
func (m *startMap) add(entries []Entry, i int) {
	if e := &entries[i]; m.inOrder && e.Size != 0 && e.Offset >= m.end {
		m.end = e.Offset + e.Size
		return
	}
	m.addSlow(entries, i)
}

func (m *startMap) addSlow(entries []Entry, i int) {
	e := &entries[i]
	if e.Size == 0 || m.sameA >= 0 {
		return
	}
	if m.inOrder {
		if e.Offset >= m.end {
			m.end = e.End()
			return
		}
		m.inOrder = false
		m.makeBitmap(entries[:i])
	}
	if m.starts == nil {
		return // checked by sorting
	}
	w, bit := m.bit(e.Offset)
	if m.starts[w]&bit != 0 {
		m.sameA, m.sameB = firstAt(entries, e.Offset, i), i
		return
	}
	m.starts[w] |= bit
}

// bit is the word of the bitmap and the bit in it of the start at off.
func (m *startMap) bit(off uint64) (int, uint64) {
	u := off >> m.shift
	return int(u / 64), 1 << (u % 64)
}

// makeBitmap makes the bitmap (if the bound allows one) holding the starts
// of before, entries in order with disjoint ranges, so no two share one.
func (m *startMap) makeBitmap(before []Entry) {
	if m.words == 0 {
		return
	}
	m.starts = make([]uint64, m.words)
	for j := range before {
		if before[j].Size > 0 {
			w, bit := m.bit(before[j].Offset)
			m.starts[w] |= bit
		}
	}
}

// overlap returns two overlapping entries among those added, or (-1, -1):
// the first entry whose start repeats an earlier one's, else the first
// range containing another's start.
func (m *startMap) overlap(entries []Entry) (int, int) {
	switch {
	case m.inOrder:
		return -1, -1
	case m.starts == nil:
		return sortedOverlap(entries)
	case m.sameA >= 0:
		return m.sameA, m.sameB
	}
	for i := range entries {
		e := &entries[i]
		if e.Size == 0 {
			continue
		}
		lo := e.Offset>>m.shift + 1                   // first unit after its own start
		hi := (e.End() + (1<<m.shift - 1)) >> m.shift // one past its last unit
		// A range within one unit (lo == hi) contains no other start.
		if u, ok := firstSet(m.starts, lo, hi); ok {
			return i, firstAt(entries, u<<m.shift, -1)
		}
	}
	return -1, -1
}

// sortedOverlap is overlap without a bitmap, for bounds too large for one:
// the same answer, from the non-empty entries' positions sorted by start.
// Offsets are aligned, so ranges overlap exactly when they share a start or
// one's start lies strictly inside the other.
func sortedOverlap(entries []Entry) (int, int) {
	var byStart []int
	for i := range entries {
		if entries[i].Size > 0 {
			byStart = append(byStart, i)
		}
	}
	// Stable by position, so equal starts are listed in entry order.
	slices.SortStableFunc(byStart, func(a, b int) int { return cmp.Compare(entries[a].Offset, entries[b].Offset) })
	// The first entry, in entry order, whose start repeats an earlier one's,
	// and the first entry with that start: where its run of equal starts
	// begins in byStart.
	sameA, sameB := -1, -1
	run := 0
	for k := 1; k < len(byStart); k++ {
		b := byStart[k]
		if entries[byStart[run]].Offset != entries[b].Offset {
			run = k
		} else if sameB < 0 || b < sameB {
			sameA, sameB = byStart[run], b
		}
	}
	if sameA >= 0 {
		return sameA, sameB
	}
	// Else the first range, in entry order, that contains another's start.
	for i := range entries {
		e := &entries[i]
		if e.Size == 0 {
			continue
		}
		k, _ := slices.BinarySearchFunc(byStart, e.Offset+1, func(j int, off uint64) int { return cmp.Compare(entries[j].Offset, off) })
		if k < len(byStart) && entries[byStart[k]].Offset < e.End() {
			return i, byStart[k]
		}
	}
	return -1, -1
}

// checkNoOverlap is the startMap check over a whole slice.
func checkNoOverlap(entries []Entry, unit, bound uint64) (int, int) {
	m := newStartMap(unit, bound)
	for i := range entries {
		m.add(entries, i)
	}
	return m.overlap(entries)
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
