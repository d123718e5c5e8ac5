package cache

import "iter"

// handleTable finds a live entry by its id (Cache.handles). Ids are handed
// out in increasing order (Cache.nextID) and added as they are, so the
// table is a slice indexed by id from base: 8 bytes an entry, where a map
// sized for a warm llama-1184 load took 36 KiB (each new page of which is
// a page fault in a fresh process). Removed ids leave holes; leading holes
// are dropped as they appear. Entries that live on while far newer ones
// come and go (a program holding its entries while others are re-packed
// many times) would let the holes grow without bound, so once the slice
// is mostly holes its older half moves to a map: the memory stays
// proportional to the live entries.
type handleTable struct {
	base  uint64   // id of slots[0]
	slots []*entry // nil: no live entry of that id
	old   map[uint64]*entry
	n     int // live entries in slots and old
}

func (t *handleTable) len() int { return t.n }

func (t *handleTable) get(id uint64) *entry {
	if id >= t.base {
		if i := id - t.base; i < uint64(len(t.slots)) {
			return t.slots[i]
		}
		return nil
	}
	return t.old[id]
}

// reserve makes room for n more ids.
func (t *handleTable) reserve(n int) {
	if cap(t.slots)-len(t.slots) < n {
		s := make([]*entry, len(t.slots), len(t.slots)+n)
		populate(s[len(s):cap(s)])
		copy(s, t.slots)
		t.slots = s
	}
}

// add adds e, whose id is larger than any added before.
func (t *handleTable) add(e *entry) {
	if len(t.slots) == 0 {
		t.base = e.id
	}
	for t.base+uint64(len(t.slots)) < e.id {
		t.slots = append(t.slots, nil) // ids made and never added
	}
	t.slots = append(t.slots, e)
	t.n++
}

// remove removes the entry of id, if any.
func (t *handleTable) remove(id uint64) {
	if id < t.base {
		if _, ok := t.old[id]; ok {
			delete(t.old, id)
			t.n--
		}
		return
	}
	i := id - t.base
	if i >= uint64(len(t.slots)) || t.slots[i] == nil {
		return
	}
	t.slots[i] = nil
	t.n--
	lead := 0
	for lead < len(t.slots) && t.slots[lead] == nil {
		lead++
	}
	t.slots = t.slots[lead:]
	t.base += uint64(lead)
	if len(t.slots) >= 1024 && len(t.slots) > 4*(t.n-len(t.old)) {
		t.spill()
	}
}

// spill moves the live entries of the slice's older half to the map.
func (t *handleTable) spill() {
	half := len(t.slots) / 2
	if t.old == nil {
		t.old = map[uint64]*entry{}
	}
	for i, e := range t.slots[:half] {
		if e != nil {
			t.old[t.base+uint64(i)] = e
		}
	}
	rest := make([]*entry, len(t.slots)-half, max(len(t.slots)-half, 16))
	copy(rest, t.slots[half:])
	t.slots = rest
	t.base += uint64(half)
}

// all yields the live entries with their ids, in no particular order. The
// body must not add or remove entries.
func (t *handleTable) all() iter.Seq2[uint64, *entry] {
	return func(yield func(uint64, *entry) bool) {
		for id, e := range t.old {
			if !yield(id, e) {
				return
			}
		}
		for i, e := range t.slots {
			if e != nil && !yield(t.base+uint64(i), e) {
				return
			}
		}
	}
}
