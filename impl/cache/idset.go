package cache

import (
	"iter"
	"math/bits"
)

// idSet is a set of entry ids: the entries one program references. Ids are
// handed out in order from 1 (Cache.nextID), so a bitmap of one bit per id
// up to the largest held is smaller than a map of them by two orders of
// magnitude: a warm llama-1184 launch's set is 148 bytes, where a map sized
// for its 1,184 entries took about 35 KiB, each new page of which is a page
// fault in a fresh process. Its size follows the largest id it holds: one
// bit for every entry the cache has made, not only those it holds.
type idSet struct {
	words []uint64
	n     int
}

// newIDSet returns an empty set with room for ids up to max.
func newIDSet(max uint64) *idSet {
	return &idSet{words: make([]uint64, 0, max/64+1)}
}

func (s *idSet) has(id uint64) bool {
	w := id / 64
	return w < uint64(len(s.words)) && s.words[w]&(1<<(id%64)) != 0
}

// add inserts id and reports whether it was new.
func (s *idSet) add(id uint64) bool {
	w := id / 64
	if w >= uint64(len(s.words)) {
		s.words = append(s.words, make([]uint64, w+1-uint64(len(s.words)))...)
	}
	if s.words[w]&(1<<(id%64)) != 0 {
		return false
	}
	s.words[w] |= 1 << (id % 64)
	s.n++
	return true
}

// len is the number of ids in the set.
func (s *idSet) len() int { return s.n }

// all yields the ids in increasing order. The body may add ids; it sees
// those added above the current one.
func (s *idSet) all() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for w := 0; w < len(s.words); w++ {
			for m := s.words[w]; m != 0; m &= m - 1 {
				if !yield(uint64(w)*64 + uint64(bits.TrailingZeros64(m))) {
					return
				}
			}
		}
	}
}
