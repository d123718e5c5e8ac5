package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// The commit protocol (docs/cache.md). The live file is only appended to or
// replaced by rename; the one in-place write is the v3 commit slot of the
// next generation, which overwrites the slot of generation-2 and never the
// slot naming the current commit, and which readers trust only through its
// CRC (G2). Order of an append commit, under the exclusive lock:
//
//  1. new data is already in fallocated regions, msync(MS_SYNC)ed;
//  2. the index block is appended (WriteAt) and fdatasync'ed;
//  3. the slot of generation+1 is written and fdatasync'ed: the commit point.
//
// A new file (first creation, a rejected file's replacement, compaction) is
// written whole to a temporary name, fsync'ed, renamed over the path and
// the directory fsync'ed; readers holding the old inode are unaffected.
// v2 has no commit slot: its commit point is the footer at the end of the
// file, which a crash can leave torn (docs/cache.md says what v2 gives up).

// commit writes the index of every persistable entry if anything changed,
// or unconditionally rewrites the file when compact is set. It runs under
// c.mu and starts a writer if none is active.
func (c *Cache) commit(compact bool) error {
	c.unsaved = nil // an attempt: its failure is the commit's error
	if c.w == nil {
		if r, err := c.beginWrite(); r != "" {
			c.stats.CommitErr = err
			return err
		}
	}
	if !compact && !c.dirty() && !c.v2Unterminated() && c.w.temp == "" {
		return nil // merging another writer's commit made ours unnecessary
	}
	list := c.commitEntries()
	var err error
	switch {
	case c.w.temp != "" && len(list) == 0 && !c.w.replacing:
		// Nothing to create: a cold cache whose packs all went to heap.
		return nil
	case compact || c.w.temp == "" && c.shouldCompact(list) || carrying(list):
		// Carried entries live in the old file of the other format: only
		// a rewrite copies their bytes into the new one.
		err = c.rewrite(list)
	default:
		err = c.appendCommit(list)
	}
	if err != nil {
		c.stats.CommitErr = fmt.Errorf("cache: commit %s: %w", c.opts.Path, err)
		_ = c.endWrite()
		return c.stats.CommitErr
	}
	c.stats.CommitErr = nil
	return nil
}

// carrying reports whether list holds an entry carried over from a file of
// the other format.
func carrying(list []*entry) bool {
	for _, e := range list {
		if e.carried {
			return true
		}
	}
	return false
}

// v2Unterminated reports whether the live v2 file grew since its last
// commit. A v2 file's only commit point is the footer at its end, so space
// appended after it (a reservation never inserted, or whose insert found
// the entry already there) makes the whole file unreadable until an index
// is appended after that space: such a session must commit even with
// nothing new (G2; found by impl/cache/lincheck TestV2ReservationAfterCommit).
// v3 records where its index is and needs nothing of the kind.
func (c *Cache) v2Unterminated() bool {
	return c.opts.Format == spec.FormatV2 && c.w != nil && c.w.temp == "" && c.w.size > c.disk.size
}

// commitEntries lists what the next index names, in offset order. An
// entry carried over from a v2 file whose full key no look-up has given
// cannot be named in a v3 index: it is dropped, and counted.
func (c *Cache) commitEntries() []*entry {
	var list []*entry
	for e := range c.byName.all() {
		if e.place != inFile || !e.persist {
			continue
		}
		if e.carried && e.v2Key && c.opts.Format == spec.FormatV3 {
			e.persist = false
			c.stats.CarryDropped++
			continue
		}
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].off() < list[j].off() })
	return list
}

func (c *Cache) specEntries(list []*entry, offs []int64) []spec.Entry {
	out := make([]spec.Entry, len(list))
	for i, e := range list {
		off := e.off()
		if offs != nil {
			off = offs[i]
		}
		out[i] = spec.Entry{Key: *e.key(), Offset: uint64(off), Size: uint64(len(e.bytes())), CRC: e.crc(), CopyID: e.copyID()}
	}
	return out
}

// encodeIndex encodes the index for list at the end of a file of size end
// and returns it with its offset.
func (c *Cache) encodeIndex(list []*entry, offs []int64, end int64) ([]byte, int64) {
	es := c.specEntries(list, offs)
	if c.opts.Format == spec.FormatV2 {
		return spec.EncodeV2Index(uint64(end), es), end
	}
	return spec.EncodeV3Index(es), roundUp(end, c.indexAlign())
}

// indexAlign is the alignment of an index block: v3 blocks are 8-aligned so
// they decode in place; a v2 index follows the data directly.
func (c *Cache) indexAlign() int64 {
	if c.opts.Format == spec.FormatV2 {
		return 1
	}
	return 8
}

// shouldCompact reports whether appending the index for list would leave
// more garbage than Options.CompactGarbageRatio of the live bytes (G4).
func (c *Cache) shouldCompact(list []*entry) bool {
	ratio := c.opts.CompactGarbageRatio
	if ratio < 0 {
		return false
	}
	idx, off := c.encodeIndex(list, nil, c.w.size)
	live := c.disk.header + int64(len(idx))
	for _, x := range c.extents(spansOf(list), c.w.align, off) {
		live += x
	}
	garbage := off + int64(len(idx)) - live
	return garbage > c.w.align && float64(garbage) > ratio*float64(live)
}

// extents is the file space of each entry of list (in file order) by the
// rule of the file's byte map (spec.MapV3, spec.MapV2): its bytes, then
// padding to the next page boundary but never into the next entry, and for
// the entry the index follows only up to the index's alignment (a rewrite
// puts the index right there), so the garbage the cache counts is the
// garbage in the file (spec.Garbage). An entry without bytes has no space
// and the byte map skips it, so what follows an entry is the next one with
// bytes, or the index: a rewrite lays an empty last entry out at the page
// boundary after the entry before it, where v3's index or v2's page of
// zeros starts, and the rest of that entry's page is dead
// (TestEmptyLastEntryGarbage). The list is walked backwards, so each entry
// knows what follows it; an entry past indexOff (a v3 file may lay data
// after its index) follows none before the index.
func (c *Cache) extents(list []span, align, indexOff int64) []int64 {
	out := make([]int64, len(list))
	next, index := indexOff, true
	for i := len(list) - 1; i >= 0; i-- {
		e := list[i]
		if e.size == 0 {
			continue
		}
		end := e.off + e.size
		limit := roundUp(end, align)
		if index {
			limit = roundUp(end, c.indexAlign())
		}
		out[i] = e.size + max(min(limit, next)-end, 0)
		if e.off < indexOff {
			next, index = e.off, false
		}
	}
	return out
}

// span is the data range of a committed copy in the file.
type span struct{ off, size int64 }

func spansOf(list []*entry) []span {
	out := make([]span, len(list))
	for i, e := range list {
		out[i] = span{e.off(), int64(len(e.bytes()))}
	}
	return out
}

// appendCommit appends the index to the writer's file and commits it; a
// temporary file is then renamed over the path.
func (c *Cache) appendCommit(list []*entry) error {
	w := c.w
	if c.opts.Format == spec.FormatV2 && len(list) == 0 {
		// v2 cannot express an empty index (ExecuTorch rejects it), so the
		// file goes away; mappings of it keep their inode.
		return c.removeLive()
	}
	if err := w.trim(); err != nil {
		return err
	}
	idx, off := c.encodeIndex(list, nil, w.size)
	gen := c.disk.generation + 1
	if w.temp == "" {
		// The live file may have been renamed into place by a writer whose
		// directory fsync failed or was cut short by a crash: its name is
		// then not durable, and a power loss would bring back the file it
		// replaced, taking this commit with it although it returned
		// success (G2). Make the name durable before committing to it.
		if err := c.fsys.SyncDir(c.dir); err != nil {
			return err
		}
	}
	if err := c.writeIndex(w.f, idx, off, gen, w.temp == ""); err != nil {
		return err
	}
	if w.temp != "" {
		if err := c.publish(w); err != nil {
			return err
		}
	}
	w.size = off + int64(len(idx))
	c.committed(list, nil, gen, w.size, int64(len(idx)))
	return nil
}

// writeIndex writes idx at off and, for v3, the commit slot of gen. With
// durable set each step is made durable before the next (live file); a
// temporary file is synced once by publish.
func (c *Cache) writeIndex(f vfs.File, idx []byte, off int64, gen uint64, durable bool) error {
	if _, err := f.WriteAt(idx, off); err != nil {
		return err
	}
	if c.opts.Format == spec.FormatV2 {
		if durable {
			return f.SyncData()
		}
		return nil
	}
	if durable {
		// The index must be durable before the slot that names it: the
		// final SyncData would make both durable, but a power loss inside
		// this window could otherwise keep the slot and lose the index,
		// leaving the reader's fallback for damage to undo the commit
		// (docs/format.md, "Save protocol": what step 3 protects).
		if err := f.SyncData(); err != nil {
			return err
		}
	}
	slot := spec.EncodeCommitSlot(spec.NewCommit(gen, c.disk.recPage, uint64(off), idx))
	if _, err := f.WriteAt(slot, spec.CommitSlotOffset(gen)); err != nil {
		return err
	}
	if durable {
		return f.SyncData()
	}
	return nil
}

// publish makes the temporary file the live file: fsync, rename, fsync the
// directory (until then a power loss may undo the rename).
func (c *Cache) publish(w *writer) error {
	if err := w.f.Sync(); err != nil {
		return err
	}
	if err := c.fsys.Rename(w.temp, c.opts.Path); err != nil {
		return err
	}
	w.temp = ""
	return c.fsys.SyncDir(c.dir)
}

// removeLive removes the live file (a v2 commit of nothing, or the
// replacement of a rejected v2 file by nothing).
func (c *Cache) removeLive() error {
	onLive := c.w.temp == ""
	if onLive || c.w.replacing {
		if err := c.fsys.Remove(c.opts.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := c.fsys.SyncDir(c.dir); err != nil {
			return err
		}
		c.w.replacing = false
	}
	clear(c.tombstones)
	c.setDisk(nil)
	c.stats.Commits++
	if onLive {
		// The session's file is unlinked: whatever it appended and committed
		// there from now on no process could find, while Finalize reported
		// success (G2; impl/cache/lincheck TestV2CommitAfterEmptyIndex). End
		// it; the next reservation starts a new file. The removal is made:
		// a failure to release the session is not the commit's (I12).
		c.noteRelease(c.endWrite())
	}
	return nil
}

// rewrite writes the live entries to a new file and renames it over the
// path (compaction, G4); the old file's mappings stay valid for handles
// already given out. A committed entry is copied from the file at the path,
// where the index this writer re-read lists it, not from this instance's
// mapping: that may be of an older file whose bytes differ from the listed
// ones (a foreign write changed one of them), and the copy keeps the listed
// copy's identity, which another instance's refresh trusts to keep its own
// mapping (G3; TestCompactionCopiesTheFileAtThePath).
func (c *Cache) rewrite(list []*entry) error {
	if c.opts.Format == spec.FormatV2 && len(list) == 0 {
		return c.removeLive()
	}
	old := c.w
	f, temp, pos, err := c.createTemp()
	if err != nil {
		return err
	}
	nw := &writer{lock: old.lock, f: f, temp: temp, align: old.align}
	offs := make([]int64, len(list))
	var buf []byte
	for i, e := range list {
		off := roundUp(pos, nw.align)
		if len(e.bytes()) > 0 {
			data := e.bytes()
			if e.committed && !e.carried && old.f != nil && old.temp == "" {
				buf = slices.Grow(buf[:0], len(e.bytes()))[:len(e.bytes())]
				if _, err := old.f.ReadAt(buf, e.off()); err != nil {
					return c.abandon(nw, err)
				}
				data = buf
			}
			if _, err := f.WriteAt(data, off); err != nil {
				return c.abandon(nw, err)
			}
		}
		offs[i], pos = off, off+int64(len(e.bytes()))
	}
	if n := len(offs); c.opts.Format == spec.FormatV2 && n > 0 && offs[n-1] >= pos {
		// The last entry is empty and starts where the index would: v2
		// demands file_offset < index_start even of an empty entry, and
		// ExecuTorch's loader, after rejecting such a file, truncates it to
		// 0 bytes. A page of zeros puts the index after it.
		pos = offs[n-1] + nw.align
	}
	idx, off := c.encodeIndex(list, offs, pos)
	gen := c.disk.generation + 1
	if err := c.writeIndex(f, idx, off, gen, false); err != nil {
		return c.abandon(nw, err)
	}
	if err := c.publish(nw); err != nil {
		return c.abandon(nw, err)
	}
	// The new file is live: the writer continues on it. Reservations in
	// the old file can no longer be committed.
	for _, r := range c.reservations {
		if r.region != nil {
			r.region, r.heapReason = nil, HeapWriteFailed
		}
	}
	_ = old.f.Close()
	if old.temp != "" {
		// Compacting a file that was never published (Compact on a cold
		// cache): its temporary file is superseded.
		_ = c.fsys.Remove(old.temp)
	}
	nw.size = off + int64(len(idx))
	c.w = nw
	c.committed(list, offs, gen, nw.size, int64(len(idx)))
	c.stats.Compactions++
	return nil
}

// abandon removes a temporary file that will not be published.
func (c *Cache) abandon(w *writer, err error) error {
	_ = w.f.Close()
	_ = c.fsys.Remove(w.temp)
	return err
}

// committed records a successful commit of list.
func (c *Cache) committed(list []*entry, offs []int64, gen uint64, size, indexLen int64) {
	for i, e := range list {
		if offs != nil {
			e.setOff(offs[i])
		}
		e.committed, e.carried = true, false
	}
	clear(c.tombstones)
	c.disk.size, c.disk.indexLen = size, indexLen
	if c.opts.Format == spec.FormatV2 {
		c.disk.v2Entries = c.specEntries(list, offs)
	}
	// gen is the generation after the one this write read or last
	// committed: v3's commit slot records it, and a v2 file, which has
	// none, counts this write's commits with it (its load gives 0).
	c.disk.generation = gen
	c.stats.Generation = gen
	c.stats.Commits++
}
