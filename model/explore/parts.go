package explore

import "sync/atomic"

// visitedParts is the visited set split by fingerprint (partOf) into one
// part a worker, each an fpSet or an fpTable. A part had a goroutine of its
// own inserting into it; now the merging worker inserts into every part
// just before the merge (expandLevel). A part numbers the states it
// holds in the order they were inserted; the merge, which numbers states
// in the order of the search, keeps each part's numbers' search numbers
// (global) when the liveness graph in memory names states by them.
type visitedParts struct {
	sets   []visitedSet
	mem    []*fpSet   // the parts in memory
	tabs   []*fpTable // … or in the fingerprint mode
	next   []uint32   // each part's next number
	global []blocks[int32]
	cur    []int // where merge is in each part's results for its chunk
}

// maxParts bounds the parts (succ.part is a byte); more than the cores
// gain nothing.
const maxParts = 64

// newBit marks, in a part's results (chunk.pres), a state the insert added.
const newBit = 1 << 31

// newMemParts splits the in-memory set into n parts, with state numbers
// when ids is set.
func newMemParts(n int, ids bool) *visitedParts {
	v := &visitedParts{mem: make([]*fpSet, n)}
	for p := range v.mem {
		v.mem[p] = newFPSet()
		if ids {
			v.mem[p].withIDs()
		}
		v.sets = append(v.sets, v.mem[p])
	}
	if ids {
		v.global = make([]blocks[int32], n)
	}
	return v.init(n)
}

// newTableParts splits the fingerprint mode's table into n parts. Each
// part asks for a release when it has grown by an eighth of itself; one
// ask in n releases, so that the memory is handed back as often as for
// one table (release is a whole collection).
func newTableParts(n int, release func()) *visitedParts {
	v := &visitedParts{tabs: make([]*fpTable, n)}
	var asks atomic.Int64
	every := func() {
		if release != nil && asks.Add(1)%int64(n) == 0 {
			release()
		}
	}
	for p := range v.tabs {
		v.tabs[p] = newFPTable(every)
		v.sets = append(v.sets, v.tabs[p])
	}
	return v.init(n)
}

func (v *visitedParts) init(n int) *visitedParts {
	v.next, v.cur = make([]uint32, n), make([]int, n)
	return v
}

// addFirst inserts the start state, number 0.
func (v *visitedParts) addFirst(fp uint64) {
	p := partOf(fp, len(v.sets))
	v.sets[p].addID(fp, 0)
	v.next[p] = 1
	if v.global != nil {
		v.global[p].add(0)
	}
}

// insert adds part p's fingerprints of chunk c, in order, and records for
// each whether it was new and its number in the part.
func (v *visitedParts) insert(p int, c *chunk) {
	set, next, res := v.sets[p], v.next[p], c.pres[p][:0]
	if v.tabs != nil {
		v.tabs[p].warm(c.pfp[p])
	}
	for _, fp := range c.pfp[p] {
		id, added := set.addID(fp, next)
		if added {
			next++
			id |= newBit
		}
		res = append(res, id)
	}
	c.pres[p], v.next[p] = res, next
}

// startChunk readies resolve for chunk c's successors.
func (v *visitedParts) startChunk() { clear(v.cur) }

// resolve is what insert found for the next successor of chunk c that is
// not a self-loop, in part p: whether it is new, and the number of the state
// it leads to: state, the next number, when new; for a state seen before,
// its number if asked for (wantID) and kept, else 0.
func (v *visitedParts) resolve(c *chunk, p uint8, state uint32, wantID bool) (uint32, bool) {
	r := c.pres[p][v.cur[p]]
	v.cur[p]++
	if r&newBit != 0 {
		if v.global != nil {
			v.global[p].add(int32(state))
		}
		return state, true
	}
	if wantID && v.global != nil {
		return uint32(v.global[p].at(int(r))), false
	}
	return 0, false
}

// lookup names a state by its search number (stateIDs, for the lasso).
func (v *visitedParts) lookup(fp uint64) (uint32, bool) {
	p := partOf(fp, len(v.sets))
	id, ok := v.mem[p].lookup(fp)
	if !ok {
		return 0, false
	}
	return uint32(v.global[p].at(int(id))), true
}

// bytes is the memory the parts hold.
func (v *visitedParts) bytes() uint64 {
	var n uint64
	for _, s := range v.mem {
		n += uint64(len(s.slots))*8 + uint64(len(s.ids))*4
	}
	for _, t := range v.tabs {
		n += t.bytes()
	}
	for p := range v.global {
		n += uint64(len(v.global[p].b)) * blockLen * 4
	}
	return n
}

// free releases the fingerprint mode's tables.
func (v *visitedParts) free() {
	for _, t := range v.tabs {
		t.free()
	}
}
