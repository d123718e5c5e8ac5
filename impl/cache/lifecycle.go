package cache

import (
	"fmt"
	"sort"
	"strings"
)

// InitializeForProgram starts packing a program. On first use, and whenever
// no write is in progress, it loads the committed index (or refreshes it when
// another process committed since, G3); the outcome is in Stats. It fails
// only for misuse: an empty program name, a closed cache, or another program
// still between InitializeForProgram and Finalize.
func (c *Cache) InitializeForProgram(program string) error {
	if program == "" {
		return fmt.Errorf("%w: empty program name", ErrUnknownProgram)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if c.active != "" && c.active != program {
		return fmt.Errorf("%w: %q while %q", ErrProgramActive, program, c.active)
	}
	if _, live := c.programs[program]; live && c.active != program {
		// Another thread joining the program's initialization (two
		// launches of one program through one Manager) is not a second
		// packing; one after its Finalize is.
		return fmt.Errorf("%w: %q (DeleteProgram ends it)", ErrProgramLive, program)
	}
	// A load that could not use the file (busy shared lock: a writer is
	// between its first append and its commit; an I/O error) sends this
	// program's reservations to heap, even if the lock is free by the time
	// they come (docs/locking.md, "A busy lock"). The next program retries.
	var reason HeapReason
	if c.fileReason == "" && c.w == nil {
		reason = c.load()
	}
	if c.programs[program] == nil {
		// Room for every id made so far, as a warm launch uses every
		// indexed entry: its look-ups then allocate nothing.
		c.programs[program] = newIDSet(c.nextID)
	}
	c.setActive(program)
	c.initialized = true
	c.finalized = false
	c.blocked = reason
	c.lastLookupUnnamed = false
	return nil
}

// Finalize ends the active program's packing: new file data is written back
// (msync MS_SYNC, so its pages are clean, G5) and mapped read-only, unused
// heap reservations are dropped, and the cache commits if anything changed
// (G2, G4). A failed commit is recorded in Stats.CommitErr and does not fail
// Finalize: the packed bytes are in memory and inference goes on (G8).
func (c *Cache) Finalize() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if c.active == "" {
		return ErrNoProgram
	}
	// The walks start once the commit below has merged what it found.
	defer c.startWalks()
	c.setActive("")
	c.finalized = true
	c.finishRegions(true)
	// Space reserved and never inserted is dropped: heap memory to the
	// collector, file space to garbage (counted, reclaimed by compaction).
	clear(c.reservations)
	clear(c.inserted)
	clear(c.insertedStaged)
	c.spare = nil // not held past the program's packing (G5)
	if !c.writable() {
		return nil
	}
	if c.dirty() || c.v2Unterminated() {
		_ = c.commit(false)
	}
	if c.w != nil {
		c.noteRelease(c.endWrite())
	}
	return nil
}

// Save commits new and dropped entries. Nothing is written, and size and
// mtime of the file stay, when nothing changed (G4; ExecuTorch appended a
// 20-byte trailer per call, latent issue 10c). Unlike Finalize it returns
// the commit's error.
func (c *Cache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if !c.writable() {
		return nil
	}
	if !c.dirty() && !c.v2Unterminated() {
		// Nothing to commit, but a write session a reservation outside any
		// launch opened (a re-pack after finalize whose insert kept an
		// equal packing another process committed) ends here: an idle
		// instance must not keep the writer lock, which sends every other
		// process's launch to the heap (G8; found by TestConformanceOnCompute).
		// A reservation still to be inserted keeps the session: ending it
		// would send that packing to the heap.
		if len(c.reservations) == 0 {
			c.endIdleWrite()
		}
		return nil
	}
	c.finishRegions(false)
	err := c.commit(false)
	c.endIdleWrite()
	return err
}

// Compact rewrites the file with only its live entries and renames it over
// the old one, whatever the garbage ratio.
func (c *Cache) Compact() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if !c.writable() {
		return nil
	}
	c.finishRegions(false)
	err := c.commit(true)
	c.endIdleWrite()
	return err
}

// endIdleWrite ends the write session of a cache with no launch in
// progress. Its outcome is not the save's: the commit (or its failure) is
// already decided, and failing a save whose commit was made would break
// I12's "error if and only if not committed". Closing a file whose data was
// synced before the commit point, or giving back the lock, loses nothing;
// a failure to do so is recorded in Stats.ReleaseErr.
func (c *Cache) endIdleWrite() {
	if c.w != nil && c.active == "" {
		c.noteRelease(c.endWrite())
	}
}

// Invalidate drops the entries of the given weight names (every bias) from
// the index: the next look-up misses and re-packs, and the next commit drops
// them from the file (G3). Programs that hold their handles keep them.
func (c *Cache) Invalidate(weights ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	drop := map[string]bool{}
	for _, w := range weights {
		drop[w] = true
	}
	c.invalidate(func(e *entry) bool {
		if drop[e.key().Weight] {
			return true
		}
		// An entry loaded from a v2 file knows only the concatenation of
		// its weight and bias names. Drop it when it starts with a dropped
		// weight name: that may drop more than asked (one weight name a
		// prefix of another's), which costs a re-pack, where keeping it
		// would serve bytes packed from the old source (G1, G3).
		if e.v2Key {
			for w := range drop {
				if w != "" && strings.HasPrefix(e.key().Weight, w) {
					return true
				}
			}
		}
		return false
	})
	return nil
}

// InvalidateAll drops every entry from the index.
func (c *Cache) InvalidateAll() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.invalidate(func(*entry) bool { return true })
	return nil
}

func (c *Cache) invalidate(pred func(*entry) bool) {
	for e := range c.byName.all() {
		if pred(e) {
			c.unindex(e)
			c.missReason[c.name(*e.key())] = RepackInvalidated
		}
	}
}

// DeleteProgram releases a program's references (the backend's destroy).
// Heap entries nobody references are freed; file entries stay indexed for
// the next program or launch. It never wraps a count: each program holds at
// most one reference per entry.
func (c *Cache) DeleteProgram(program string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	set, ok := c.programs[program]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownProgram, program)
	}
	delete(c.programs, program)
	if c.active == program {
		c.setActive("")
	}
	// In any order: each step touches only its own entry (a reference, the
	// index slot it holds, its handle).
	for id := range set.all() {
		e := c.handles.get(id)
		if e == nil {
			continue
		}
		e.refs--
		if e.refs == 0 && e.place == inHeap {
			c.unindex(e)
		}
		c.releaseIfUnused(e)
	}
	return nil
}

// ProgramNames returns the sorted names of the entries a program references.
func (c *Cache) ProgramNames(program string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	set := c.programs[program]
	if set == nil {
		return nil
	}
	for id := range set.all() {
		if e := c.handles.get(id); e != nil {
			out = append(out, e.key().Weight+e.key().Bias)
		}
	}
	sort.Strings(out)
	return out
}

// Names returns the sorted weight and bias names (concatenated, as
// ExecuTorch's get_packed_data_names does) of the indexed entries.
func (c *Cache) Names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, c.byName.len())
	for e := range c.byName.all() {
		out = append(out, e.key().Weight+e.key().Bias)
	}
	sort.Strings(out)
	return out
}
