package cache

import (
	"bytes"
	"fmt"
	"weak"

	"github.com/xpwc/xpwc/internal/rawmem"
	"github.com/xpwc/xpwc/spec"
)

// The provider operations: what XNNPACK's operator creation calls while it
// packs a program's weights (look up; on a miss reserve, pack, look up or
// insert; then the bytes of the handle).

// LookUp returns the handle of the entry for k when every field of k matches
// (G1). A miss records why (new, seed, fingerprint, source, corrupt), so the
// re-pack that follows is counted under that reason. Unnamed constants
// (k.Weight == "") always miss and send the next reservation to heap.
func (c *Cache) LookUp(k spec.Key) (Handle, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Handle{}, false
	}
	if !c.initialized {
		c.stats.LookUpsBeforeInit++
		c.stats.Misses++
		return Handle{}, false
	}
	if k.Weight == "" {
		c.lastLookupUnnamed = true
		c.stats.Misses++
		c.unreserved++
		return Handle{}, false
	}
	c.lastLookupUnnamed = false
	e, reason := c.find(k)
	if e == nil {
		c.stats.Misses++
		c.unreserved++
		c.missReason[c.name(k)] = reason
		return Handle{}, false
	}
	c.stats.Hits++
	c.ref(e)
	return c.handle(e), true
}

// find returns the current entry for k, checking its data on first use, or
// nil and the reason of the miss.
func (c *Cache) find(k spec.Key) (*entry, RepackReason) {
	e := c.indexed(k)
	if e == nil {
		e = c.adoptCarried(k)
	}
	if e == nil {
		if r, ok := c.missReason[c.name(k)]; ok {
			return nil, r
		}
		return nil, RepackNew
	}
	if !c.matches(e, k) {
		return nil, mismatchReason(e, k)
	}
	if e.place == inHeap && c.active != "" && c.blocked == "" && c.writable() && !c.activeIDs.has(e.id) {
		// A heap packing made when the file could not be used (a busy
		// lock, a failed reservation), held by another loaded program
		// (DeleteProgram unindexes it otherwise): this launch can write
		// the file (ReserveSpace's rule), so the weight is re-packed
		// there. Served, the packing would stay out of the file for as
		// long as that program stays loaded, and no launch would be the
		// one after which every launch hits (G3; docs/bugs.md, "A
		// fall-back heap packing kept out of the file"). It lives on for
		// its holders, outside the index, as an invalidated entry does.
		c.unindex(e)
		return nil, RepackHeap
	}
	if c.opts.VerifyData == VerifyOnFirstUse && !c.verify(e) {
		return nil, RepackCorrupt
	}
	return e, ""
}

// indexed returns the entry indexed under k's name, or nil.
func (c *Cache) indexed(k spec.Key) *entry { return c.byName.get(k.Weight, k.Bias) }

// adoptCarried finds, for a v3 cache, an entry carried over from a v2 file
// that k names: same concatenated name and seed, all a v2 file records,
// and what a v2 cache would serve. The entry is indexed under k from then
// on, with the checksum of its bytes as they are, so the next commit can
// write it into a v3 file (entries no look-up adopts cannot be, see
// commitEntries).
func (c *Cache) adoptCarried(k spec.Key) *entry {
	if c.opts.Format != spec.FormatV3 {
		return nil
	}
	// In a v3 cache a carried entry's name is its v2 one: weight and bias
	// concatenated (its key's Weight, with no Bias).
	e := c.byName.get(k.V2Name(), "")
	if e == nil || !e.carried || !e.v2Key || e.key().Seed != k.Seed {
		return nil
	}
	crc, ok := crcMapped(e.bytes())
	if !ok {
		return nil // the mapping faulted: not served, re-packed
	}
	c.byName.remove(e)
	// A new record: the old one is the carried file's parsed index. The
	// copy identity is new: first written to a v3 file by the next commit.
	e.rec = &spec.Entry{Key: k, Offset: e.rec.Offset, Size: e.rec.Size, CRC: crc, CopyID: newCopyID()}
	e.v2Key, e.verified = false, true
	c.index(e)
	return e
}

// verify checks a file entry's data once per cache; a corrupt entry is
// dropped from the index so that the re-pack replaces it (G1, G3).
func (c *Cache) verify(e *entry) bool {
	if !c.needsCheck(e) {
		return true
	}
	crc, ok := crcMapped(e.bytes())
	return c.recordCheck(e, ok && crc == e.crc())
}

// needsCheck reports whether e's data is still to be checked: a file entry
// of a v3 file not checked yet. Entries packed by this cache are trusted
// (verified at insert): their checksum was computed from the bytes the
// packer wrote. A loaded entry that left the index (retired while a
// program holds it) is not this cache's packing and is still checked
// (I13).
func (c *Cache) needsCheck(e *entry) bool {
	return !e.verified && e.place == inFile && c.opts.Format == spec.FormatV3
}

// recordCheck records the outcome of e's check (held tells whether its
// bytes matched its checksum) and reports it; a corrupt entry is dropped
// from the index so that the re-pack replaces it (G1, G3).
func (c *Cache) recordCheck(e *entry, held bool) bool {
	e.verified = true
	c.stats.Verified++
	if held {
		return true
	}
	c.stats.Corrupt++
	c.missReason[c.name(*e.key())] = RepackCorrupt
	c.unindex(e)
	return false
}

// ReserveSpace returns n bytes, 64-byte aligned, for a packer to fill. With
// a usable file the space is appended to it (fallocate first, so a full disk
// is an error here and never a SIGBUS later) and the packer fills heap
// memory that LookUpOrInsert writes into that space (with
// Options.MappedWrites the space is mapped read-write instead); otherwise
// it is heap memory and the reason is recorded (G8). It fails only for
// n <= 0, after Close, before the first InitializeForProgram, and after
// Finalize with no look-up that missed and was not followed by a
// reservation yet (ErrNoMiss). After Finalize a reservation is a compute's
// re-pack, or a packer thread that looked up before another thread's
// Finalize: both follow their own miss and must get space (I12), and the
// count of open misses never refuses them, whatever the interleaving,
// since each reservation's miss was counted before it.
func (c *Cache) ReserveSpace(n int) ([]byte, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: reserve %d bytes", ErrInvalidSize, n)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if !c.initialized {
		return nil, ErrNotInitialized
	}
	if c.unreserved == 0 && c.active == "" && c.finalized {
		err := fmt.Errorf("%w: reserve %d bytes", ErrNoMiss, n)
		if c.opts.Path != "" {
			err = &PathError{Path: c.opts.Path, Err: err}
		}
		return nil, err
	}
	c.unreserved = max(c.unreserved-1, 0)
	// A packing follows: the walks run beside it rather than wait for it.
	c.startWalks()
	reason := c.fileReason
	switch {
	case reason != "":
	case c.readOnly:
		reason = HeapReadOnly
	case c.lastLookupUnnamed:
		reason = HeapUnnamed
	case c.blocked != "" && c.active != "":
		// The rest of a launch that found the file unusable (a busy lock
		// at its load or at a reservation) goes to the heap without
		// asking again (docs/locking.md, "A busy lock"); a reservation
		// after finalize (a re-pack at a compute) belongs to no launch
		// and asks again (found by TestConformanceOnCompute).
		reason = c.blocked
	default:
		if buf, rg, r := c.reserveFile(n); r == "" {
			c.reservations[bufKey(buf)] = &reservation{buf: buf, region: rg, pages: rg}
			return buf, nil
		} else {
			reason = r
		}
	}
	buf := alignedHeap(n)
	c.reservations[bufKey(buf)] = &reservation{buf: buf, heapReason: reason}
	return buf, nil
}

// ReservedInFile reports whether buf, space ReserveSpace returned and not
// yet handed to LookUpOrInsert, lies in the cache file, where a commit can
// name it, rather than on the heap. The file's size does not tell: a new
// file is allocated ahead of its reservations.
func (c *Cache) ReservedInFile(buf []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reservations[bufKey(buf)]
	return r != nil && r.region != nil
}

// LookUpOrInsert inserts packed, which must start at a buffer ReserveSpace
// returned, under k and returns its handle. packed == nil after a hit returns
// the existing handle (ExecuTorch #18295). When k is already present with
// equal bytes the existing handle is returned and the reservation becomes
// garbage; with different bytes the new packing wins, since it is what the
// current kernel produced (G1).
func (c *Cache) LookUpOrInsert(k spec.Key, packed []byte) (Handle, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Handle{}, ErrClosed
	}
	if !c.initialized {
		return Handle{}, ErrNotInitialized
	}
	if !spec.ValidTensorName(k.Weight) || !spec.ValidTensorName(k.Bias) {
		return Handle{}, fmt.Errorf("%w: %q, %q", ErrInvalidKey, k.Weight, k.Bias)
	}
	if packed == nil {
		if k.Weight != "" {
			if e, _ := c.find(k); e != nil {
				c.ref(e)
				return c.handle(e), nil
			}
		}
		return Handle{}, fmt.Errorf("%w: %q, %q", ErrNotFound, k.Weight, k.Bias)
	}
	r := c.reservations[bufKey(packed)]
	if r == nil {
		if _, ok := c.inserted[bufKey(packed)]; ok {
			return Handle{}, ErrAlreadyInserted
		}
		if w, ok := c.insertedStaged[rawmem.Addr(packed)]; ok && w.Value() == bufKey(packed) {
			return Handle{}, ErrAlreadyInserted
		}
		return Handle{}, ErrNotReserved
	}
	if len(packed) > len(r.buf) {
		return Handle{}, fmt.Errorf("%w: %d packed bytes in a %d-byte reservation", ErrInvalidSize, len(packed), len(r.buf))
	}
	delete(c.reservations, bufKey(packed))
	if r.region != nil && r.region.staged {
		// Weakly: a staged buffer is garbage once its bytes are written,
		// and holding it to Finalize kept a whole cold launch's packed
		// bytes (600 MB for llama-1184) on the heap. Once collected, its
		// address may be another buffer's, which Value tells apart.
		c.insertedStaged[rawmem.Addr(packed)] = weak.Make(bufKey(packed))
	} else {
		c.inserted[bufKey(packed)] = struct{}{}
	}
	data := r.buf[:len(packed):len(packed)]

	if k.Weight != "" {
		if e, _ := c.find(k); e != nil && bytes.Equal(e.bytes(), data) {
			// Its bytes equal what the caller just packed: as trusted as an
			// entry this cache packed, so no later Bytes checks them
			// (VerifyOnCompute), as the model's insert has it.
			if r.region != nil && r.region.staged {
				c.spareStaging(r.buf)
			}
			e.verified = true
			c.ref(e)
			c.refHolders(e)
			return c.handle(e), nil
		}
	}
	var crc uint32
	heapReason := r.heapReason
	rg := r.region
	if rg != nil && c.opts.Format == spec.FormatV3 {
		crc = spec.DataChecksum(data) // from the heap copy, before the write
	}
	if rg != nil && rg.staged {
		// The packer's bytes are in heap memory: written into the region
		// and served from a read-only mapping of it. The staging buffer is
		// not reused (the packer may still hold it). A failed write or map
		// leaves the entry on the heap and out of every commit, as a
		// failed region sync does (dropRegionEntries).
		if mapped, reason, err := c.writeStaged(rg, data); err != nil {
			c.stats.FallbackErr = err
			rg, heapReason = nil, reason
		} else {
			data = mapped
			c.spareStaging(r.buf)
		}
	}
	e := c.newEntry(k, data)
	if rg != nil {
		rg.used = true
		e.place, e.rec.Offset = inFile, uint64(rg.off)
		e.persist = k.Weight != ""
	} else {
		e.place, e.heapReason = inHeap, heapCodeOf(heapReason)
	}
	if e.place == inFile && c.opts.Format == spec.FormatV3 {
		e.rec.CRC, e.rec.CopyID = crc, newCopyID()
	}
	e.verified = true
	if e.place == inFile && e.persist {
		c.unsaved = append(c.unsaved, e)
	}
	if k.Weight != "" {
		n := c.name(k)
		if old := c.byName.get(k.Weight, k.Bias); old != nil {
			c.unindex(old)
		}
		c.index(e)
		reason := c.missReason[n]
		if reason == "" {
			reason = RepackNew
		}
		delete(c.missReason, n)
		c.stats.Repacks[reason]++
	}
	c.ref(e)
	c.refHolders(e)
	if e.refs == 0 {
		// Inserted outside any program (allowed, like XNNPACK's provider):
		// an unnamed entry nobody references would be unreachable.
		c.releaseIfUnused(e)
	}
	return c.handle(e), nil
}

// refHolders gives e, inserted outside any program's packing (the re-pack
// after finalize of an entry whose check failed at a compute, impl/runtime
// Backend.packedBytes), to the programs holding the failed entry of its
// name: they compute from e now, and deleting them releases e as it would
// have released the entry e replaces (G5; the model's compute re-pack keeps
// the holders). Found by TestConformanceOnCompute: a heap re-pack outlived
// the program that made it.
func (c *Cache) refHolders(e *entry) {
	if c.active != "" || e.key().Weight == "" {
		return
	}
	n := c.name(*e.key())
	for _, set := range c.programs {
		if set.has(e.id) {
			continue
		}
		for id := range set.all() {
			if old := c.handles.get(id); old != nil && old.failed && c.name(*old.key()) == n {
				set.add(e.id)
				e.refs++
				break
			}
		}
	}
}

// Bytes returns the packed bytes of h (XNNPACK's offset_to_addr). File bytes
// are mapped read-only once finalized. A stale or foreign handle is
// ErrStaleHandle, never another entry's bytes.
//
// Under VerifyOnCompute the first Bytes of a loaded entry checks its data
// before returning it, without holding c.mu over the checksum: the
// checksum is the first touch of the entry's pages, a quarter of a
// millisecond for a llama-1184 layer on a shadow-paged guest, and held
// under c.mu it kept the verify-ahead walk from recording its own checks
// (docs/benchmarks.md, "First output on a shadow-paged guest"). No byte is
// returned before a check of them held; two goroutines that check one
// entry at once record it once.
func (c *Cache) Bytes(h Handle) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	e := c.handles.get(h.id)
	if e == nil || h.cache != c.tag {
		return nil, ErrStaleHandle
	}
	c.reach(e)
	if c.opts.VerifyData == VerifyOnCompute && !e.failed && c.needsCheck(e) {
		held, err := c.checkUnlocked(e)
		if err != nil {
			return nil, err
		}
		// Another thread may have released e meanwhile (its weight
		// invalidated, its program deleted): the handle is stale now, as
		// it would be had this call come after that thread's.
		if c.handles.get(h.id) != e {
			return nil, ErrStaleHandle
		}
		// Another call may have recorded a check of e meanwhile (the
		// walk's, or a concurrent Bytes): it is recorded once.
		if !e.failed && c.needsCheck(e) && !c.recordCheck(e, held) {
			e.failed = true
		}
	}
	if e.failed {
		return nil, fmt.Errorf("%w: %s", ErrCorruptData, e.key().Weight)
	}
	return e.bytes(), nil
}

// checkUnlocked checks e's data with c.mu released (it is held on entry
// and on return) and reports whether the bytes match e's checksum, or
// ErrClosed if the cache was closed meanwhile. An indexed or retired
// entry's bytes and checksum never change, and its mapping stays mapped
// until Close, which waits for the checks in flight (c.checks) before it
// unmaps.
func (c *Cache) checkUnlocked(e *entry) (bool, error) {
	data, want := e.bytes(), e.crc()
	c.checks.Add(1)
	c.mu.Unlock()
	sum, ok := crcMapped(data)
	if c.computeChecked != nil {
		c.computeChecked(e)
	}
	c.checks.Done()
	c.mu.Lock()
	if c.closed {
		return false, ErrClosed
	}
	return ok && sum == want, nil
}

// IsFinalized reports whether the last initialized program was finalized.
func (c *Cache) IsFinalized() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.finalized
}
