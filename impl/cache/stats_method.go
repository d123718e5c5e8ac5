package cache

import (
	"maps"
	"sort"
)

// Stats returns a snapshot of the counters and of the space accounting.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Format = c.opts.Format
	s.Repacks = maps.Clone(c.stats.Repacks)
	s.HeapBytes = map[HeapReason]uint64{}
	for _, e := range c.handles.all() {
		switch e.place {
		case inHeap:
			s.HeapBytes[e.heapReason.reason()] += uint64(len(e.bytes()))
		case inFile:
			s.FileBytes += uint64(len(e.bytes()))
		}
	}
	s.FileSize, s.GarbageBytes, s.PaddingBytes = c.space()
	return s
}

// space returns the size of the file and its garbage and padding bytes, as
// of the last load or commit plus what the active writer appended. An
// entry's space is its extent, the rule the compaction check uses, so the
// garbage reported is the garbage that decides compaction (G4): the last
// entry of a rewritten file has no page padding on disk.
func (c *Cache) space() (size, garbage, padding int64) {
	size = c.disk.size
	align := c.align()
	if c.w != nil {
		size, align = c.w.size, c.w.align
	}
	if size == 0 {
		return 0, 0, 0
	}
	live := c.disk.header + c.disk.indexLen
	var list []span
	for e := range c.byName.all() {
		if e.place == inFile && e.committed {
			list = append(list, span{e.off(), int64(len(e.bytes()))})
		}
	}
	// A dropped copy the file still lists is live in the file until this
	// cache's next commit drops it: the figure is the file's garbage, by
	// its byte map (spec.Garbage), not what the next commit will leave.
	for _, t := range c.tombstones {
		list = append(list, t.span)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].off < list[j].off })
	for i, x := range c.extents(list, align, c.disk.size-c.disk.indexLen) {
		live += x
		padding += x - list[i].size
	}
	return size, max(size-live, 0), padding
}

// MappedCopy is one copy of packed bytes this cache maps from a file, and
// how many distinct mappings of it its live entries hold (Mappings).
type MappedCopy struct {
	Name string // the entry's name, as Names gives it
	Copy uint64 // its copy identity (spec.Entry.CopyID); 0 in v2 files
	Maps int
}

// Mappings lists every copy of packed bytes this cache's live entries map
// from a file, with how many distinct mappings of that copy they hold: 1,
// since a load maps only the committed entries the cache does not hold
// already (G5). More is the same bytes resident twice in one process (I7;
// ExecuTorch PR 19988 mapped an instance's own regions again). A copy is
// its copy identity in v3 files, its name and offset in v2 files; a
// mapping is told apart by the address of the entry's bytes.
func (c *Cache) Mappings() []MappedCopy {
	c.mu.Lock()
	defer c.mu.Unlock()
	type copyOf struct {
		id   uint64
		name string
		off  int64
	}
	seen := map[copyOf]map[*byte]struct{}{}
	var order []copyOf
	for _, e := range c.handles.all() {
		if e.place != inFile || len(e.bytes()) == 0 {
			continue
		}
		k := copyOf{id: e.copyID(), name: e.key().Weight + e.key().Bias}
		if e.copyID() == 0 {
			k.off = e.off()
		}
		if seen[k] == nil {
			seen[k] = map[*byte]struct{}{}
			order = append(order, k)
		}
		seen[k][&e.bytes()[0]] = struct{}{}
	}
	out := make([]MappedCopy, 0, len(order))
	for _, k := range order {
		out = append(out, MappedCopy{Name: k.name, Copy: k.id, Maps: len(seen[k])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
