package cache

import "sort"

// Report is the process-wide view of the caches a Manager holds (the
// counterpart of ExecuTorch's PackedCacheReport, #22413): heap bytes against
// file bytes is the health signal, since a cache that "loaded" but packs to
// heap looks healthy by state alone.
type Report struct {
	// PerCache holds each live cache's stats, sorted by path so indices are
	// stable between reports; the heap-only cache has Path "".
	PerCache []PathStats
	// HeapBytes and FileBytes add up the caches' live bytes.
	HeapBytes map[HeapReason]uint64
	FileBytes uint64
}

// PathStats is one cache's path and stats.
type PathStats struct {
	Path  string
	Stats Stats
}

// FallbackBytes is the heap bytes that should have been in a file: every
// reason except no-path (a program that did not opt in is not a fallback)
// and unnamed (never persisted by design).
func (r Report) FallbackBytes() uint64 {
	var n uint64
	for reason, b := range r.HeapBytes {
		if reason != HeapNoPath && reason != HeapUnnamed {
			n += b
		}
	}
	return n
}

// Report snapshots every live cache. It holds the manager's lock only to
// list the caches, then takes each cache's lock in turn.
func (m *Manager) Report() Report {
	m.mu.Lock()
	type pc struct {
		path string
		c    *Cache
	}
	var caches []pc
	for p, mc := range m.live {
		caches = append(caches, pc{p, mc.c})
	}
	m.mu.Unlock()
	sort.Slice(caches, func(i, j int) bool { return caches[i].path < caches[j].path })
	r := Report{HeapBytes: map[HeapReason]uint64{}}
	for _, x := range caches {
		s := x.c.Stats()
		r.PerCache = append(r.PerCache, PathStats{Path: x.path, Stats: s})
		for reason, b := range s.HeapBytes {
			r.HeapBytes[reason] += b
		}
		r.FileBytes += s.FileBytes
	}
	return r
}
