package cache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/internal/rawmem"
	"github.com/xpwc/xpwc/spec"
)

// committedFile is the committed state of a cache file in either format.
type committedFile struct {
	size       int64
	generation uint64 // v3 commit generation; 0 for v2
	entries    []spec.Entry
	header     int64 // v3: one page; v2: 0
	indexLen   int64 // committed index block (v2: entries and footer)
	recPage    int   // v3: the writer page size the file records
	// format is the file's. It differs from Options.Format when the caller
	// named the other one: the entries are then carried over (merge) and
	// the first commit rewrites the file in the configured format.
	format spec.Format
	// m is the read-only mapping of the whole file the index was decoded
	// from (parseMapped), for the entries' bytes; nil if it was read.
	m vfs.Mapping
}

// parseFile reads the committed state of f, in the file's own format. Bad
// content is an error matching spec.ErrCorrupt (or ErrForeignFile);
// anything else is an I/O error.
func (c *Cache) parseFile(f vfs.File) (*committedFile, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	return c.parseAt(f, f, size, nil)
}

// parseMapped is parseFile for a load: the index is decoded in place from
// a read-only mapping of the whole file (spec.Mapped), which then serves the
// entries' bytes (committedFile.m). Only the names are copied, where a
// read needs a buffer for the whole index: each new heap page is a page
// fault in a fresh process, and a warm file is in the page cache
// (TestWarmLoadAllocationBound). The few small reads outside the index
// go to f, and the index range is populated in one call (populateIndex):
// a load that maps the file anew each time then faults in neither the
// file's first page nor the index a block at a time
// (BenchmarkWarmLoadCore1184). A map that fails, a fault while reading
// the mapping (the file truncated under it), or any parse error, sends it
// to parseFile, which reads the file and says what is wrong with it.
func (c *Cache) parseMapped(f vfs.File) (*committedFile, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size > 0 && int64(int(size)) == size {
		if m, err := f.Map(0, int(size), vfs.ProtRead); err == nil {
			var cf *committedFile
			var r io.ReaderAt = f
			if c.opts.Format == spec.FormatV3 && size >= int64(len(headBuf{})) {
				r = &headReader{ReaderAt: f}
			}
			read := func() {
				cf, err = c.parseAt(f, spec.Mapped{ReaderAt: r, Mem: m.Bytes()}, size, populateIndex(m, int64(c.pageSize)))
			}
			if readMapped(read) && err == nil {
				cf.m = m
				return cf, nil
			}
			c.noteRelease(m.Close())
		}
	}
	return c.parseFile(f)
}

// headBuf is a v3 file's first bytes: its two commit slots, where
// spec.DetectFormat reads the magic and ParseV3 the slots.
type headBuf = [2 * spec.V3SlotSize]byte

// headReader reads a file through ReaderAt, except that reads inside its
// first len(headBuf) bytes (the file has that many) are served from one
// read of them: a v3 load's format check and commit slots then cost one
// system call, not two (1-2 us of a warm load's core in a fresh process).
// A load that expects v2 does not use it: a v2 file's format check reads
// only a few bytes there, and the buffer would be one more fresh heap page.
// A failed read of the head is not kept: each read is then made as asked,
// and fails or not as it would have.
type headReader struct {
	io.ReaderAt
	b    *headBuf // nil until read
	read bool     // the head was tried
}

func (h *headReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(headBuf{})) {
		return h.ReaderAt.ReadAt(p, off)
	}
	if !h.read {
		h.read = true
		b := new(headBuf)
		if n, err := h.ReaderAt.ReadAt(b[:], 0); n == len(b) && (err == nil || errors.Is(err, io.EOF)) {
			h.b = b
		}
	}
	if h.b == nil {
		return h.ReaderAt.ReadAt(p, off)
	}
	return copy(p, h.b[off:]), nil
}

// populateIndex returns the spec.Parser.Prefetch of a parse from m: it
// populates the pages of the index range, so that a load in a process
// whose mappings come and go (a warm heap, a new mapping each load) pays
// one call, not a fault per fault-around block of the index. A refusal
// (no vfs.Populater, an old kernel) costs only that speed: the parse
// faults the pages in as it reads them.
func populateIndex(m vfs.Mapping, page int64) func(lo, hi int64) {
	pm, ok := m.(vfs.Populater)
	if !ok {
		return nil
	}
	return func(lo, hi int64) {
		lo = lo / page * page
		_ = pm.Populate(int(lo), int(hi-lo))
	}
}

// parseAt is parseFile reading f's size bytes through r, telling the
// parser's Prefetch (if not nil) the index range before it decodes it.
func (c *Cache) parseAt(f vfs.File, r io.ReaderAt, size int64, prefetch func(lo, hi int64)) (*committedFile, error) {
	got, err := spec.DetectFormat(r, size)
	if err != nil {
		return nil, foreignOrCorrupt(f, size, err)
	}
	if got != c.opts.Format && c.detectFormat && c.w == nil && c.handles.len() == 0 && len(c.tombstones) == 0 {
		// No format was named: the file's is used, so an ExecuTorch v2
		// file is read and appended to as v2, never replaced by v3. Only
		// while the cache holds nothing, since entry names depend on it.
		c.opts.Format = got
		c.byName.init(got == spec.FormatV2)
	}
	parser := spec.Parser{MaxIndexBytes: c.opts.MaxIndexBytes, Prefetch: prefetch, Populate: vfs.PopulateHeap}
	if got == spec.FormatV2 {
		v, err := parser.ParseV2(r, size)
		if err != nil {
			return nil, err
		}
		return &committedFile{size: size, entries: v.Entries, indexLen: size - int64(v.IndexStart), format: got}, nil
	}
	// ParseV3 falls back to the previous commit only when the newest index
	// is corrupt; an I/O error comes back as such (G2, G8).
	var v spec.V3File // on the stack: see ParseV3Into
	if err := parser.ParseV3Into(&v, r, size); err != nil {
		return nil, err
	}
	return &committedFile{
		size: size, generation: v.Commit.Generation, entries: v.Entries,
		header: int64(v.PageSize), indexLen: int64(v.Commit.IndexLen), recPage: v.PageSize,
		format: got,
	}, nil
}

// otherFormat reports whether cf is a file of the format the caller did not
// name: its entries are carried over, and it is never appended to.
func (c *Cache) otherFormat(cf *committedFile) bool {
	return cf != nil && cf.format != c.opts.Format
}

// load reads (or refreshes) the committed index under the shared lock and
// records the outcome. It returns the reason this program must pack to heap,
// or "" when the file is usable.
func (c *Cache) load() HeapReason {
	c.stats.LoadErr = nil
	if err := c.checkRegular(); err != nil {
		c.stats.Load, c.stats.LoadErr = spec.LoadFailed, err
		return HeapNotRegular
	}
	lk, err := acquireFile(c.fsys, c.opts.Path, vfs.LockShared, c.opts.LockWait, !c.readOnly)
	if err != nil && (writeRefused(err) || c.readOnly && errors.Is(err, fs.ErrNotExist)) {
		// A read-only cache (a system image, a file system mounted
		// read-only, a directory this user may read but not write) may
		// have no lock file and cannot create one. No xpwc writer can be
		// active on it then: writers create the lock file before they
		// write. The data file's shared lock still keeps an ExecuTorch
		// writer out.
		if !c.readOnly {
			c.stats.FallbackErr = fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		c.readOnly = true
		lk, err = nil, nil
	}
	if err != nil {
		return c.lockFailed(err)
	}
	if lk != nil {
		defer func() { _ = lk.release() }()
	}

	f, err := c.openLive(os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		c.stats.Load = spec.LoadMissing
		_ = c.merge(nil, nil)
		c.setDisk(nil)
		return ""
	}
	if err != nil {
		c.stats.Load, c.stats.LoadErr = spec.LoadFailed, err
		if errors.Is(err, ErrNotRegular) {
			return HeapNotRegular
		}
		return HeapOpenFailed
	}
	defer func() { _ = f.Close() }()
	if err := lockData(f); err != nil {
		return c.lockFailed(err)
	}
	cf, err := c.parseMapped(f)
	if cf != nil {
		// Unless the entries took it (addCommitted).
		defer func(cf *committedFile) {
			if cf.m != nil {
				c.noteRelease(cf.m.Close())
			}
		}(cf)
	}
	if err != nil {
		c.stats.LoadErr = err
		if errors.Is(err, ErrForeignFile) && !c.opts.ReplaceForeign {
			// Not ours: left as it is, this launch packs to heap.
			c.stats.Load = spec.LoadRejected
			_ = c.merge(nil, nil)
			c.setDisk(nil)
			return HeapForeign
		}
		if !errors.Is(err, spec.ErrCorrupt) && !errors.Is(err, ErrForeignFile) {
			c.stats.Load = spec.LoadFailed
			return HeapOpenFailed
		}
		// The file is replaced at the first commit, never truncated in
		// place (PR 20337). Until then nothing in it is trusted (G7).
		c.stats.Load = spec.LoadRejected
		_ = c.merge(nil, nil)
		c.setDisk(nil)
		return ""
	}
	if err := c.merge(cf, f); err != nil {
		c.stats.Load, c.stats.LoadErr = spec.LoadFailed, err
		if errors.Is(err, vfs.ErrNotSupported) {
			return HeapNotSupported
		}
		return HeapMapFailed
	}
	c.loaded = true
	c.stats.Load = spec.LoadOK
	if c.otherFormat(cf) {
		// The entries are served from the old file's mapping; the next
		// commit writes them, in the configured format, to a new file.
		c.stats.Load = spec.LoadOtherFormat
		cf = nil
	}
	c.setDisk(cf)
	return ""
}

// lockFailed records a load that could not take a lock (the lock file's or
// the data file's) and returns the heap reason for this program: a busy
// lock, a heap-only build without flock, or an I/O error.
func (c *Cache) lockFailed(err error) HeapReason {
	c.stats.LoadErr = c.pathError(err)
	switch {
	case errors.Is(err, ErrLockBusy):
		c.stats.Load = spec.LoadLocked
		return HeapLockBusy
	case errors.Is(err, vfs.ErrNotSupported):
		c.stats.Load = spec.LoadFailed
		return HeapNotSupported // heap-only build: no flock
	}
	c.stats.Load = spec.LoadFailed
	return HeapOpenFailed
}

// setDisk records the live file's committed state (nil: none usable).
func (c *Cache) setDisk(cf *committedFile) {
	if cf == nil {
		c.disk = diskView{format: c.opts.Format}
		return
	}
	c.disk = diskView{
		format: c.opts.Format, size: cf.size, generation: cf.generation,
		header: cf.header, indexLen: cf.indexLen, recPage: cf.recPage,
	}
	if c.opts.Format == spec.FormatV2 {
		c.disk.v2Entries = cf.entries
	}
	c.stats.Generation = cf.generation
}

// sameKey reports whether a key read from the file names the same packing as
// k. A v2 file stores only the concatenated name and the seed, so for v2
// that is all that can be compared.
func (c *Cache) sameKey(fromFile, k spec.Key) bool {
	if c.opts.Format == spec.FormatV2 {
		return c.name(fromFile) == c.name(k) && fromFile.Seed == k.Seed
	}
	return fromFile == k
}

// sameData reports whether committed entry d is the copy e already holds.
// In v3 the copy identity decides: a re-pack of a copy whose bytes a foreign
// write changed has the same key, size and CRC as that copy, and an
// instance that kept its mapping of the changed bytes would catch the
// corruption a second time (G3). A v2 file records no copy identity, so a
// v2 cache can compare only what is there (docs/guarantees.md, G3).
func (c *Cache) sameData(e *entry, d spec.Entry) bool {
	return c.sameCopy(d.Key, d.CopyID, *e.key(), e.copyID()) && uint64(len(e.bytes())) == d.Size && e.crc() == d.CRC
}

// sameCopy reports whether a committed copy read from the file (key fk,
// copy fc) is the copy this cache knows as k, c.
func (c *Cache) sameCopy(fk spec.Key, fc uint64, k spec.Key, id uint64) bool {
	return c.sameKey(fk, k) && (c.opts.Format == spec.FormatV2 || fc == id)
}

// merge makes the index agree with the newest commit cf (nil: the file has
// no usable commit). Committed entries it no longer lists leave the index;
// its entries that this cache does not hold are mapped read-only from f;
// tombstones win over the file (the next commit drops what they name). No
// packing of this cache waits for a commit here: merge runs between writes,
// and endWrite keeps a write's uncommitted packings out of every later
// commit. The entries of a file of the other format are carried over:
// served from the mapping, not committed in the configured format yet, so
// the next commit writes them (Stats.CarriedOver; docs/paths.md). A carried
// copy yields to a copy of the same name another writer committed in the
// configured format: taking that one spares rewriting the whole file for
// entries it already holds (TestCarriedCopiesYieldToAnotherWritersConversion).
func (c *Cache) merge(cf *committedFile, f vfs.File) error {
	if cf != nil && c.byName.len() == 0 && c.handles.len() == 0 && len(c.tombstones) == 0 && len(c.carriedNames) == 0 {
		// First load (every warm launch): nothing to reconcile, so the
		// file's entries are added as they are, without the name map the
		// reconciliation needs (its building was half of a warm load's
		// time). The parser has checked that no two have the same name.
		return c.addCommitted(cf, f, cf.entries)
	}
	disk := map[entryName]spec.Entry{}
	if cf != nil {
		for _, d := range cf.entries {
			disk[c.name(d.Key)] = d
		}
	}
	for n, t := range c.tombstones {
		d, ok := disk[n]
		switch {
		case !ok:
			delete(c.tombstones, n) // someone else dropped it already
		case c.sameCopy(d.Key, d.CopyID, t.key, t.copyID):
			delete(disk, n)                               // still listed: our next commit drops it
			t.span = span{int64(d.Offset), int64(d.Size)} // a compaction may have moved it
			c.tombstones[n] = t
		default:
			delete(c.tombstones, n) // replaced by another writer
		}
	}
	for e := range c.byName.all() {
		if !e.committed {
			continue
		}
		n := c.name(*e.key())
		if d, ok := disk[n]; ok && c.sameData(e, d) {
			e.setOff(int64(d.Offset))
			delete(disk, n)
			continue
		}
		// The newest commit no longer lists it: another writer dropped or
		// replaced it, or the file was replaced. Nothing to tombstone.
		e.committed = false
		c.unindex(e)
	}
	add := make([]spec.Entry, 0, len(disk))
	for n, d := range disk {
		if _, done := c.carriedNames[n]; done && c.otherFormat(cf) {
			continue // carried already (and maybe adopted under its full key)
		}
		add = append(add, d)
	}
	return c.addCommitted(cf, f, add)
}

// addCommitted indexes the committed entries add of cf, which this cache
// does not hold, mapped read-only from f.
func (c *Cache) addCommitted(cf *committedFile, f vfs.File, add []spec.Entry) error {
	if len(add) == 0 {
		return nil
	}
	// The data's end decides what is mapped and walked. With the mapping
	// the index was decoded from (every load that mapped the file), the
	// whole file is mapped already and the end is taken in the loop below,
	// which reads every record anyway: a pass of its own over a llama-1184
	// index's records took 10 us of a 190 us warm load.
	m := cf.m
	var end uint64
	if m == nil {
		for i := range add {
			end = max(end, add[i].End())
		}
	}
	var mem []byte
	switch {
	case m != nil:
		mem = m.Bytes()
	case end > 0:
		var err error
		if m, err = f.Map(0, int(end), vfs.ProtRead); err != nil {
			return fmt.Errorf("cache: map committed data: %w", err)
		}
		mem = m.Bytes()
	}
	// Sized once instead of grown through every power of two (a warm
	// launch of 1,184 entries).
	c.byName.reserve(len(add))
	c.handles.reserve(len(add))
	// One allocation for all entries of the load.
	es := make([]entry, len(add))
	populate(es)
	// Into an empty index (every warm launch) the names of a file of the
	// configured format go unchecked: the parser and merge's map give each
	// name once, so none displaces another, and each is hashed once, not
	// twice. A v3 file's names can meet in a v2 cache (concatenated).
	displace := c.byName.len() > 0 || c.otherFormat(cf)
	for i := range add {
		d := &add[i]
		if displace {
			if cur := c.byName.get(d.Key.Weight, d.Key.Bias); cur != nil {
				// A packing of ours that will never be committed (heap:
				// the lock was busy; file bytes of a failed commit), or a
				// carried copy: the committed one serves later look-ups;
				// ours lives on while referenced.
				c.unindex(cur)
			}
		}
		e := &es[i]
		c.nextID++
		end = max(end, d.End())
		e.id, e.rec, e.base = c.nextID, d, rawmem.Base(mem[d.Offset:d.End()])
		c.handles.add(e)
		e.place = inFile
		e.committed, e.persist = true, true
		e.v2Key = cf.format == spec.FormatV2
		if c.otherFormat(cf) {
			e.committed, e.carried = false, true
			c.carriedNames[c.name(d.Key)] = struct{}{}
			c.stats.CarriedOver++
		}
		c.index(e)
		if c.opts.VerifyData == VerifyOnLoad {
			c.verify(e)
		}
	}
	if end == 0 && mem != nil {
		// No entry has bytes: the mapping is not kept (the load closes
		// it), so none points into it, as when nothing was mapped.
		for i := range es {
			es[i].base = nil
		}
	}
	if end > 0 {
		cf.m = nil
		c.maps = append(c.maps, m)
		if !c.opts.DisablePrefault && !c.verifiesAhead(cf) {
			c.pendingWalks = append(c.pendingWalks, pendingWalk{m: m, n: int(end)})
		}
	}
	if !c.opts.DisablePrefault && c.verifiesAhead(cf) {
		c.pendingWalks = append(c.pendingWalks, pendingWalk{ents: es, recs: add})
	}
	return nil
}

// verifiesAhead reports whether the prefault walk over the mapping of cf's
// data checks entries rather than only populating (not Options.DisableVerifyAhead):
// only where the compute would check them (VerifyOnCompute) and the file
// has data checksums of the configured format (v3).
func (c *Cache) verifiesAhead(cf *committedFile) bool {
	return !c.opts.DisableVerifyAhead && c.opts.VerifyData == VerifyOnCompute &&
		c.opts.Format == spec.FormatV3 && cf != nil && cf.format == spec.FormatV3
}
