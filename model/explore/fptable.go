package explore

// fpTable is the visited set of the fingerprint mode (Options.Fingerprints):
// 64-bit fingerprints and nothing beside them, as TLC's fingerprint set
// keeps them. It is split by a fingerprint's top byte into segments, each
// an open-addressing table with linear probing, grown on its own by a
// quarter when 4/5 full. So every segment stays between 64 % and 80 %
// full, a state costs 10 to 12.5 bytes, and a growth needs room for one
// segment twice, not for the whole table. The segments a growth replaces
// are garbage that the collector would let pile up to the size of the live
// heap (the table itself) before collecting; each time the table has grown
// by an eighth since the last time, release hands them back to the
// operating system, so the resident set stays near what the table holds.
// Two states with one fingerprint count as one, as in fpSet.
type fpTable struct {
	segs [fpSegments]fpSegment
	n    int
	// grown counts the slots of segments replaced since the last release.
	grown   int
	release func()
	sink    uint64 // warm's
}

type fpSegment struct {
	slots []uint64 // 0 marks a free slot
	n     int
}

const (
	fpSegments = 256
	pageWords  = 512 // one 4 KiB page of slots
)

// newFPTable returns an empty table; release (debug.FreeOSMemory in the
// explorer, nil for none) is called after growth, as the type says.
func newFPTable(release func()) *fpTable { return &fpTable{release: release} }

// home is the slot where fp's probe starts in a segment of size n: bits
// below the segment's byte, scaled to n (not a power of two).
func fpHome(fp uint64, n int) int { return int((fp >> 24 & 0xffffffff) * uint64(n) >> 32) }

// addID inserts fp and reports whether it was new. It keeps no state
// numbers (the fingerprint mode's liveness check numbers states itself), so
// the id returned is 0; the signature is the visited set's (fpSet.addID).
func (t *fpTable) addID(fp uint64, _ uint32) (uint32, bool) {
	if fp == 0 {
		fp = 1 // 0 marks a free slot; fingerprints 0 and 1 are one
	}
	s := &t.segs[fp>>56]
	if s.n >= len(s.slots)/5*4 {
		t.grown += len(s.slots)
		s.grow()
		if t.release != nil && t.grown >= t.n/8 {
			t.release()
			t.grown = 0
		}
	}
	for i := fpHome(fp, len(s.slots)); ; {
		switch s.slots[i] {
		case 0:
			s.slots[i] = fp
			s.n++
			t.n++
			return 0, true
		case fp:
			return 0, false
		}
		if i++; i == len(s.slots) {
			i = 0
		}
	}
}

// warm reads the slot where each fingerprint's probe starts, before
// addID inserts them in order: the reads do not wait on each other, so
// the processor overlaps their misses in memory far larger than its
// caches, where an insert waits for its own probe's before the next
// starts. A chunk's fingerprints' slots fit in the cache. The sum keeps
// the reads from being left out.
func (t *fpTable) warm(fps []uint64) {
	var sum uint64
	for _, fp := range fps {
		s := &t.segs[fp>>56]
		if len(s.slots) > 0 {
			sum += s.slots[fpHome(fp, len(s.slots))]
		}
	}
	t.sink += sum
}

func (s *fpSegment) grow() {
	n := max(pageWords, (len(s.slots)*5/4+pageWords-1)/pageWords*pageWords)
	slots := make([]uint64, n)
	for _, fp := range s.slots {
		if fp == 0 {
			continue
		}
		i := fpHome(fp, n)
		for slots[i] != 0 {
			if i++; i == n {
				i = 0
			}
		}
		slots[i] = fp
	}
	s.slots = slots
}

// bytes is the memory the table holds.
func (t *fpTable) bytes() uint64 {
	var n uint64
	for i := range t.segs {
		n += uint64(len(t.segs[i].slots)) * 8
	}
	return n
}

// free empties the table and releases its memory.
func (t *fpTable) free() {
	for i := range t.segs {
		t.segs[i] = fpSegment{}
	}
	t.n = 0
	if t.release != nil {
		t.release()
	}
}
