package cache

import (
	"hash/maphash"
	"iter"
	"math/rand/v2"

	"github.com/xpwc/xpwc/internal/rawmem"
	"github.com/xpwc/xpwc/spec"
)

// nameIndex is the current entry of each name (Cache.byName), an
// open-addressing table of entry pointers keyed by the names the entries'
// keys give. A Go map keyed by entryName holds a copy of both name strings
// in every slot: 96 KiB for a warm llama-1184 load, where this table takes
// 24 KiB. Each new heap page is a page fault in a fresh process, the
// larger part of a warm launch's time on a machine whose first touches
// trap (TestWarmLoadAllocationBound).
//
// In v2 mode (concat) a name is the concatenation of weight and bias
// names, all a v2 file stores: ("ab", "c") and ("a", "bc") are one name,
// hashed and compared without building the concatenation, so a look-up
// allocates nothing (TestLookUpAllocatesNothing).
type nameIndex struct {
	seed   maphash.Seed // concat mode's
	wseed  uint64       // else: spec.NamePairHash's
	concat bool
	// slots and tags have a power-of-two length. A tag is 0 for a slot
	// never used, 1 for one whose entry was removed (probes go on past
	// it), else the top bits of the name's hash, so a probe passes other
	// names without reading their entries.
	slots []*entry
	tags  []uint32
	n     int // entries held
	used  int // slots with a tag (entries and removed ones)
	// last is the entry get found last, while it is held, and lastW and
	// lastB the strings it was asked for: XNNPACK's operator creation
	// looks a weight up and, on a hit, asks for it again with the same key
	// (LookUpOrInsert with no bytes). The strings are compared by address
	// and length, equal only for the same bytes: comparing the names cost
	// every other look-up (the next weight's, of about the same length)
	// memory compares, 38 instructions a look-up in v3 and 51 in v2 mode
	// on a warm llama-1184 core, before the hash it needed anyway.
	last         *entry
	lastW, lastB string
}

const (
	tagEmpty   = 0
	tagRemoved = 1
)

// init empties the index and sets its naming: concat for a v2 cache.
func (t *nameIndex) init(concat bool) {
	*t = nameIndex{seed: maphash.MakeSeed(), wseed: rand.Uint64(), concat: concat}
}

func (t *nameIndex) len() int { return t.n }

// hash hashes the name (w, b). In concat mode the bytes hashed are those
// of w+b; else both parts are hashed from the index's random seed with
// spec.NamePairHash: a few multiplies a name, where a maphash call for
// each part cost about 57 instructions more a hash (a streaming
// maphash.Hash, which copies both names first, more again).
func (t *nameIndex) hash(w, b string) (slot uint64, tag uint32) {
	var s uint64
	if t.concat {
		s = t.concatHash(w, b)
	} else {
		s = spec.NamePairHash(t.wseed, rawmem.StringBytes(w), rawmem.StringBytes(b))
	}
	return s, max(uint32(s>>32), tagRemoved+1)
}

// concatHash hashes w+b, built on the stack when it is short. A name
// with one part empty (every entry a v2 file stores: its name is the
// weight, the bias empty) is hashed where it is: the same bytes hash the
// same whichever call hashes them. A llama-1184 name (38-46 bytes) is
// built in 64 bytes, not 256: with the copy, zeroing the larger buffer
// was most of a v2 hash's 90 instructions.
func (t *nameIndex) concatHash(w, b string) uint64 {
	switch {
	case b == "":
		return maphash.String(t.seed, w)
	case w == "":
		return maphash.String(t.seed, b)
	case len(w)+len(b) <= 64:
		var buf [64]byte
		n := copy(buf[:], w)
		n += copy(buf[n:], b)
		return maphash.Bytes(t.seed, buf[:n])
	}
	var buf [256]byte
	if len(w)+len(b) <= len(buf) {
		n := copy(buf[:], w)
		n += copy(buf[n:], b)
		return maphash.Bytes(t.seed, buf[:n])
	}
	var h maphash.Hash
	h.SetSeed(t.seed)
	_, _ = h.WriteString(w)
	_, _ = h.WriteString(b)
	return h.Sum64()
}

// sameString reports whether a and b are the same bytes: of one length
// and at one address (or empty), so equal without reading them.
func sameString(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || rawmem.Base(rawmem.StringBytes(a)) == rawmem.Base(rawmem.StringBytes(b)))
}

// same reports whether e's name is (w, b).
func (t *nameIndex) same(e *entry, w, b string) bool {
	if !t.concat {
		return e.key().Weight == w && e.key().Bias == b
	}
	return concatEqual(e.key().Weight, e.key().Bias, w, b)
}

// concatEqual reports whether a1+a2 == b1+b2 without building either.
func concatEqual(a1, a2, b1, b2 string) bool {
	if len(a1)+len(a2) != len(b1)+len(b2) {
		return false
	}
	if len(a1) > len(b1) {
		a1, a2, b1, b2 = b1, b2, a1, a2
	}
	if b2 == "" {
		// b1 is the whole name (an entry of a v2 file against a look-up's
		// key): two comparisons instead of three.
		return b1[:len(a1)] == a1 && b1[len(a1):] == a2
	}
	// a1 is a prefix of b1's length or shorter: a1 | a2[:k] | a2[k:]
	// against b1[:len(a1)] | b1[len(a1):] | b2.
	k := len(b1) - len(a1)
	return b1[:len(a1)] == a1 && a2[:k] == b1[len(a1):] && a2[k:] == b2
}

// get returns the entry named (w, b), or nil.
func (t *nameIndex) get(w, b string) *entry {
	if t.n == 0 {
		return nil
	}
	if e := t.last; e != nil && sameString(w, t.lastW) && sameString(b, t.lastB) {
		return e
	}
	h, tag := t.hash(w, b)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch t.tags[i] {
		case tagEmpty:
			return nil
		case tag:
			if e := t.slots[i]; t.same(e, w, b) {
				t.last, t.lastW, t.lastB = e, w, b
				return e
			}
		}
	}
}

// put makes e the entry of its name, in place of any other.
func (t *nameIndex) put(e *entry) {
	if (t.used+1)*4 > len(t.slots)*3 {
		t.rehash(t.n + 1)
	}
	h, tag := t.hash(e.key().Weight, e.key().Bias)
	mask := uint64(len(t.slots) - 1)
	free := -1
	for i := h & mask; ; i = (i + 1) & mask {
		switch t.tags[i] {
		case tagEmpty:
			if free < 0 {
				free = int(i)
				t.used++
			}
			t.slots[free], t.tags[free] = e, tag
			t.n++
			return
		case tagRemoved:
			if free < 0 {
				free = int(i)
			}
		case tag:
			if t.same(t.slots[i], e.key().Weight, e.key().Bias) {
				if t.last == t.slots[i] {
					t.last = nil
				}
				t.slots[i] = e
				return
			}
		}
	}
}

// remove takes e out of the index if it is the entry of its name.
func (t *nameIndex) remove(e *entry) {
	if t.n == 0 {
		return
	}
	h, _ := t.hash(e.key().Weight, e.key().Bias)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; t.tags[i] != tagEmpty; i = (i + 1) & mask {
		if t.slots[i] == e {
			t.slots[i], t.tags[i] = nil, tagRemoved
			t.n--
			if t.last == e {
				t.last = nil
			}
			return
		}
	}
}

// reserve makes room for n more entries, so a load of n entries sizes
// the table once instead of growing it through every power of two.
func (t *nameIndex) reserve(n int) {
	if (t.used+n)*4 > len(t.slots)*3 {
		t.rehash(t.n + n)
	}
}

// rehash moves the entries into a table with room for n, dropping the
// removed slots.
func (t *nameIndex) rehash(n int) {
	size := 8
	for size*3 < n*4 {
		size <<= 1
	}
	old := t.slots
	t.slots, t.tags = make([]*entry, size), make([]uint32, size)
	populate(t.slots)
	populate(t.tags)
	t.n, t.used = 0, 0
	for _, e := range old {
		if e != nil {
			t.put(e)
		}
	}
}

// all yields the entries in no particular order. The body may remove
// entries (one removed before it is reached is not yielded) but not put
// any: a put may move the entries to a new table.
func (t *nameIndex) all() iter.Seq[*entry] {
	return func(yield func(*entry) bool) {
		for i := range t.slots {
			if e := t.slots[i]; e != nil && !yield(e) {
				return
			}
		}
	}
}
