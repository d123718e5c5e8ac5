package explore

import (
	"encoding/binary"
	"math/bits"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// fpSet is the set of visited states, kept as the 64-bit fingerprints of
// their canonical encodings (model.Encoding.Fingerprint), as TLC keeps
// them: 8 bytes a slot instead of the state. Open addressing with linear
// probing, at most 4/5 full, grown by half again when full; a fingerprint
// is already a uniform hash, so its top bits pick the slot (scaled to the
// table's size, which need not be a power of two). Two states with one
// fingerprint would count as one (docs/model.md, "Memory and fingerprints", gives the
// odds).
type fpSet struct {
	slots []uint64 // 0 marks a free slot
	// ids, when kept (withIDs), holds beside each slot the number of the
	// state whose fingerprint it is: what the liveness check's graph names
	// states by.
	ids []uint32
	n   int
}

func newFPSet() *fpSet { return &fpSet{slots: make([]uint64, 4096)} }

// withIDs makes the set keep a state number beside each fingerprint.
func (s *fpSet) withIDs() *fpSet {
	s.ids = make([]uint32, len(s.slots))
	return s
}

// home is the slot where fp's probe starts.
func (s *fpSet) home(fp uint64) int { return int((fp >> 32) * uint64(len(s.slots)) >> 32) }

// add inserts fp and reports whether it was new.
func (s *fpSet) add(fp uint64) bool {
	_, added := s.addID(fp, 0)
	return added
}

// addID inserts fp as state id and reports whether it was new; when it was
// not, it returns the id it was added with.
func (s *fpSet) addID(fp uint64, id uint32) (uint32, bool) {
	if fp == 0 {
		fp = 1 // 0 marks a free slot; fingerprints 0 and 1 are one
	}
	if s.n >= len(s.slots)/5*4 {
		s.grow()
	}
	for i := s.home(fp); ; {
		switch s.slots[i] {
		case 0:
			s.slots[i] = fp
			if s.ids != nil {
				s.ids[i] = id
			}
			s.n++
			return id, true
		case fp:
			if s.ids != nil {
				return s.ids[i], false
			}
			return 0, false
		}
		if i++; i == len(s.slots) {
			i = 0
		}
	}
}

// lookup returns the id fp was added with (withIDs).
func (s *fpSet) lookup(fp uint64) (uint32, bool) {
	if fp == 0 {
		fp = 1
	}
	for i := s.home(fp); ; {
		switch s.slots[i] {
		case 0:
			return 0, false
		case fp:
			return s.ids[i], true
		}
		if i++; i == len(s.slots) {
			i = 0
		}
	}
}

func (s *fpSet) grow() {
	old, oldIDs := s.slots, s.ids
	s.slots = make([]uint64, len(old)/2*3)
	if oldIDs != nil {
		s.ids = make([]uint32, len(s.slots))
	}
	for k, fp := range old {
		if fp == 0 {
			continue
		}
		i := s.home(fp)
		for s.slots[i] != 0 {
			if i++; i == len(s.slots) {
				i = 0
			}
		}
		s.slots[i] = fp
		if oldIDs != nil {
			s.ids[i] = oldIDs[k]
		}
	}
}

// links holds, for every visited state but the first (numbered in the order
// they were found), the state it was first reached from and the op that
// reached it: 6 bytes a state, in memory (memLinks) or in a file
// (diskLinks). Ops are kept as indexes into a table of the distinct ops
// seen (the alphabet and its crash branches), the top two bits saying
// whether the canonical form exchanged the processes, the names.
type links struct {
	store linkStore
	ops   []spec.Op
	opID  map[spec.Op]uint16
}

// linkStore keeps the links by state number.
type linkStore interface {
	put(parent int32, via uint16)
	get(i int32) (parent int32, via uint16)
}

// memLinks keeps the links in fixed-size blocks.
type memLinks struct {
	parent blocks[int32]
	via    blocks[uint16]
}

func (m *memLinks) put(parent int32, via uint16) { m.parent.add(parent); m.via.add(via) }
func (m *memLinks) get(i int32) (int32, uint16)  { return m.parent.at(int(i)), m.via.at(int(i)) }

const (
	swappedBit = 1 << 15
	namesBit   = 1 << 14
	renameBits = swappedBit | namesBit
)

func newLinks() *links { return newLinksIn(&memLinks{}) }

func newLinksIn(store linkStore) *links {
	l := &links{store: store, opID: map[spec.Op]uint16{}}
	l.store.put(-1, 0)
	return l
}

// add records the next state: reached from state i by op, renamed by r
// to its canonical form.
func (l *links) add(i int32, op spec.Op, r model.Renaming) {
	id, ok := l.opID[op]
	if !ok {
		id = uint16(len(l.ops))
		if id >= namesBit {
			panic("explore: more than 16383 distinct ops") // the alphabet has a few dozen
		}
		l.ops = append(l.ops, op)
		l.opID[op] = id
	}
	if r&model.SwapProcs != 0 {
		id |= swappedBit
	}
	if r&model.SwapNames != 0 {
		id |= namesBit
	}
	l.store.put(i, id)
}

// path rebuilds the ops from the start state to state i.
func (l *links) path(i int32) []spec.Op {
	ops := l.trace(i, spec.Op{})
	return ops[:len(ops)-1]
}

// trace rebuilds the ops from the start state to state i, then last. Each
// stored op names processes and names as its (canonical) parent state
// numbers them; perm maps that numbering to the actual run's, and each
// renaming to a canonical state composes into it.
func (l *links) trace(i int32, last spec.Op) []spec.Op {
	var chain []int32
	var vias []uint16
	for j := i; j > 0; {
		parent, via := l.store.get(j)
		chain, vias = append(chain, j), append(vias, via)
		j = parent
	}
	var perm model.Renaming
	out := make([]spec.Op, 0, len(chain)+1)
	for k := len(chain) - 1; k >= 0; k-- {
		v := vias[k]
		out = append(out, perm.Op(l.ops[v&^renameBits]))
		if v&swappedBit != 0 {
			perm ^= model.SwapProcs
		}
		if v&namesBit != 0 {
			perm ^= model.SwapNames
		}
	}
	return append(out, perm.Op(last))
}

// blocks is a sequence kept in fixed-size blocks: growing it copies nothing
// and leaves no garbage, so the memory it takes is what it holds.
type blocks[T any] struct{ b [][]T }

const blockLen = 1 << 14

func (c *blocks[T]) add(v T) {
	if n := len(c.b); n == 0 || len(c.b[n-1]) == blockLen {
		c.b = append(c.b, make([]T, 0, blockLen))
	}
	last := &c.b[len(c.b)-1]
	*last = append(*last, v)
}

func (c *blocks[T]) at(i int) T { return c.b[i/blockLen][i%blockLen] }

// frontier holds the states of one level in the order they were found,
// each as its encoding with the zero bytes left out: a bitmap of the
// nonzero bytes, then those bytes. Most fields of a state are zero (names
// beyond the bounds, flags not set), so a state takes about a third of its
// encoding's size. States are read back in order, once; reset keeps the
// blocks for the level after next.
type frontier struct {
	b   [][]byte
	cur int // the block being filled
	n   int
	rd  cursor // where next reads
}

const (
	bitmapSize = (model.EncodedSize + 7) / 8
	frontBlock = 1 << 16
	lows7      = 0x7f7f7f7f7f7f7f7f
	gather     = 0x0102040810204080 // moves bit 8k to bit 56+k
)

func (f *frontier) reset() {
	for k := range f.b {
		f.b[k] = f.b[k][:0]
	}
	f.cur, f.n = 0, 0
}

func (f *frontier) push(e *model.Encoding) {
	if len(f.b) == 0 || cap(f.b[f.cur])-len(f.b[f.cur]) < bitmapSize+model.EncodedSize {
		if len(f.b) > 0 {
			f.cur++
		}
		if f.cur == len(f.b) {
			f.b = append(f.b, make([]byte, 0, frontBlock))
		}
	}
	f.b[f.cur] = appendPacked(f.b[f.cur], e)
	f.n++
}

// appendPacked appends e with its zero bytes left out: the bitmap of its
// nonzero bytes, then those bytes.
func appendPacked(blk []byte, e *model.Encoding) []byte {
	at := len(blk)
	blk = append(blk, make([]byte, bitmapSize)...)
	for k := range len(e) / 8 {
		w := binary.LittleEndian.Uint64(e[8*k:])
		if w == 0 {
			continue // whole words of zeros are the common case
		}
		// The top bit of each nonzero byte, gathered into one byte.
		nz := ((w & lows7) + lows7 | w) &^ lows7
		blk[at+k] = byte((nz >> 7) * gather >> 56)
		for ; nz != 0; nz &= nz - 1 {
			blk = append(blk, e[8*k+bits.TrailingZeros64(nz)/8])
		}
	}
	for j := len(e) / 8 * 8; j < len(e); j++ {
		if c := e[j]; c != 0 {
			blk[at+j/8] |= 1 << (j % 8)
			blk = append(blk, c)
		}
	}
	return blk
}

// unpack writes into e the encoding packed as present (the bitmap) and
// vals (the nonzero bytes).
func unpack(present, vals []byte, e *model.Encoding) {
	*e = model.Encoding{}
	at := 0
	for w, m := range present {
		for ; m != 0; m &= m - 1 {
			e[w*8+bits.TrailingZeros8(m)] = vals[at]
			at++
		}
	}
}

// A cursor reads a frontier from the start.
type cursor struct{ blk, at int }

// pop reads the next state's encoding into e.
func (f *frontier) pop(c *cursor, e *model.Encoding) {
	for c.at == len(f.b[c.blk]) {
		c.blk, c.at = c.blk+1, 0
	}
	blk := f.b[c.blk]
	present := blk[c.at : c.at+bitmapSize]
	n := 0
	for _, m := range present {
		n += bits.OnesCount8(m)
	}
	at := c.at + bitmapSize
	unpack(present, blk[at:at+n], e)
	c.at = at + n
}

func (c *blocks[T]) len() int {
	if len(c.b) == 0 {
		return 0
	}
	return (len(c.b)-1)*blockLen + len(c.b[len(c.b)-1])
}
