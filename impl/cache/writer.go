package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// writer is the state of one write: the exclusive lock, and the file new data is
// appended to. That file is the live file, or (when there is no usable live
// file) a temporary file in the same directory that the first commit renames
// over the path.
type writer struct {
	lock *lockFile
	f    vfs.File
	temp string // path of f while it is a temporary file, else ""
	// replacing: the live file exists and was rejected, so publishing even
	// an empty index is worth it (the next load stops rejecting).
	replacing bool
	size      int64 // end of f: where the next region or index goes
	// ahead is the end of the space allocated in a temporary file ahead of
	// size (see allocate); the commit trims the file back to what it holds.
	// maxAhead bounds the distance (Options.AllocateAhead).
	ahead, maxAhead int64
	align           int64 // data alignment: page size, or the file's if larger
	regions         []*region
}

// beginWrite takes the exclusive lock and re-reads the newest commit, since
// another process may have committed after this cache loaded (G2, G3). It
// returns the heap reason and the error when the file cannot be written.
func (c *Cache) beginWrite() (HeapReason, error) {
	if c.readOnly {
		return HeapReadOnly, fmt.Errorf("%w: %s", ErrReadOnly, c.opts.Path)
	}
	if err := c.checkRegular(); err != nil {
		return HeapNotRegular, err
	}
	lk, err := acquire(c.fsys, c.opts.Path, vfs.LockExclusive, c.opts.LockWait)
	if err != nil && writeRefused(err) {
		c.readOnly = true
		return HeapReadOnly, fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	if err != nil {
		if errors.Is(err, ErrLockBusy) {
			return HeapLockBusy, err
		}
		if errors.Is(err, vfs.ErrNotSupported) {
			return HeapNotSupported, err
		}
		return HeapOpenFailed, err
	}
	// Under the exclusive lock no writer is active, so every temporary file
	// is a crashed writer's leftover.
	c.removeTemps()

	f, err := c.openLive(os.O_RDWR)
	if writeRefused(err) {
		_ = lk.release()
		c.readOnly = true
		return HeapReadOnly, fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	if errors.Is(err, ErrNotRegular) {
		_ = lk.release()
		return HeapNotRegular, err
	}
	var cf *committedFile
	replacing := false
	if err == nil {
		if lerr := lockData(f); lerr != nil {
			_ = f.Close()
			_ = lk.release()
			if errors.Is(lerr, ErrLockBusy) {
				return HeapLockBusy, lerr
			}
			if errors.Is(lerr, vfs.ErrNotSupported) {
				return HeapNotSupported, lerr
			}
			return HeapOpenFailed, lerr
		}
	}
	switch {
	case err == nil:
		if cf, err = c.parseFile(f); err != nil {
			_ = f.Close()
			f = nil
			if errors.Is(err, ErrForeignFile) && !c.opts.ReplaceForeign {
				_ = lk.release()
				return HeapForeign, err
			}
			if !errors.Is(err, spec.ErrCorrupt) && !errors.Is(err, ErrForeignFile) {
				_ = lk.release()
				return HeapOpenFailed, err
			}
			// Rejected: it will be replaced by rename (G7, PR 20337).
			replacing = true
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		_ = lk.release()
		return HeapOpenFailed, err
	}
	if err := c.merge(cf, f); err != nil {
		_ = f.Close()
		_ = lk.release()
		if errors.Is(err, vfs.ErrNotSupported) {
			return HeapNotSupported, err
		}
		return HeapMapFailed, err
	}
	if c.otherFormat(cf) {
		// Never appended to in the configured format: its entries are
		// carried over (merge) into a new file that replaces it.
		_ = f.Close()
		f, cf, replacing = nil, nil, true
	}
	c.setDisk(cf)
	w := &writer{lock: lk, replacing: replacing}
	if cf != nil {
		w.f, w.size = f, cf.size
	} else {
		c.disk.recPage = max(c.pageSize, spec.MinPageSize)
		if c.opts.Format == spec.FormatV3 {
			c.disk.header = int64(c.disk.recPage)
		}
		if w.f, w.temp, w.size, err = c.createTemp(); err != nil {
			_ = lk.release()
			return HeapOpenFailed, err
		}
	}
	w.align = c.align()
	w.maxAhead = max(c.opts.AllocateAhead, 0) // negative: each region alone
	c.w = w
	return "", nil
}

// align is the alignment of data regions: the memory page size (mappings
// start at page offsets), or the page size a v3 file records if larger.
func (c *Cache) align() int64 {
	a := max(c.pageSize, c.disk.recPage)
	if c.opts.Format == spec.FormatV2 {
		a = max(a, spec.V2Alignment)
	}
	return int64(a)
}

// createTemp creates a new file next to Path holding only the header.
func (c *Cache) createTemp() (vfs.File, string, int64, error) {
	name := fmt.Sprintf("%s.tmp-%d-%016x", c.opts.Path, os.Getpid(), rand.Uint64())
	// A replacement keeps the mode of the file it replaces (a rejected
	// cache file, or the live file a compaction rewrites); a new file gets
	// Options.FileMode. Set with chmod, so the umask does not change it.
	mode := c.opts.FileMode
	if fi, err := c.fsys.Stat(c.opts.Path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	f, err := c.fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return nil, "", 0, err
	}
	if err := c.fsys.Chmod(name, mode); err != nil {
		_ = f.Close()
		_ = c.fsys.Remove(name)
		return nil, "", 0, err
	}
	// Locked before the rename publishes it, so no ExecuTorch writer can
	// take the new file from under this process (lockData).
	if err := lockData(f); err != nil {
		_ = f.Close()
		_ = c.fsys.Remove(name)
		return nil, "", 0, err
	}
	var size int64
	if c.opts.Format == spec.FormatV3 {
		h := spec.EncodeV3Header(c.disk.recPage)
		if _, err := f.WriteAt(h, 0); err != nil {
			_ = f.Close()
			_ = c.fsys.Remove(name)
			return nil, "", 0, err
		}
		size = int64(len(h))
	}
	return f, name, size, nil
}

// removeTemps removes temporary files of crashed writers. Only called under
// the exclusive lock.
func (c *Cache) removeTemps() {
	names, err := c.fsys.ReadDir(c.dir)
	if err != nil {
		return
	}
	prefix := filepath.Base(c.opts.Path) + ".tmp-"
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			_ = c.fsys.Remove(filepath.Join(c.dir, n))
		}
	}
}

// reserveFile appends a region of at least n bytes to the file and maps it
// read-write. On failure it returns the heap reason and blocks the file for
// the rest of the program, so a full disk is not retried per weight.
func (c *Cache) reserveFile(n int) ([]byte, *region, HeapReason) {
	if c.w == nil {
		if r, err := c.beginWrite(); r != "" {
			c.blocked, c.stats.FallbackErr = r, err
			return nil, nil, r
		}
	}
	w := c.w
	off := roundUp(w.size, w.align)
	length := roundUp(int64(n), w.align)
	// fallocate before the first store: on a full disk this fails cleanly,
	// where a store into a sparse mapped range would be a SIGBUS.
	if err := w.allocate(off, length); err != nil {
		if sz, serr := w.f.Size(); serr == nil && w.temp == "" {
			// A failed fallocate may have extended the live file: a v2
			// index must go after everything in it. A temporary file is
			// trimmed at commit instead.
			w.size = max(w.size, sz)
		}
		r := HeapAllocFailed
		if errors.Is(err, vfs.ErrNotSupported) {
			r = HeapNotSupported
		}
		c.blocked, c.stats.FallbackErr = r, err
		return nil, nil, r
	}
	w.size = off + length
	if !c.opts.MappedWrites {
		// The packer fills heap memory; its insert writes the bytes into
		// the allocated region (writeStaged). Buffered writes leave the
		// page cache in large folios where stores through a writable
		// mapping leave small ones (docs/benchmarks.md, "Staged writes").
		rg := &region{off: off, length: length, staged: true}
		w.regions = append(w.regions, rg)
		return c.stagingBuffer(n), rg, ""
	}
	m, err := w.f.Map(off, int(length), vfs.ProtReadWrite)
	if err != nil {
		r := HeapMapFailed
		if errors.Is(err, vfs.ErrNotSupported) {
			r = HeapNotSupported
		}
		c.blocked, c.stats.FallbackErr = r, err
		return nil, nil, r
	}
	c.maps = append(c.maps, m)
	rg := &region{m: m, off: off, length: length}
	w.regions = append(w.regions, rg)
	return m.Bytes()[:n:n], rg, ""
}

// stagingBuffer returns n bytes for a staged reservation: the spare buffer
// when it fits (Options.ReuseStaging), else a new one. A reused buffer
// keeps its capacity, so that it goes back to the spare whole: an append
// past n stays in the cache's own buffer, which nothing else uses while it
// is lent (clipping it made the spare shrink to the smallest layer, and
// every larger one allocate again).
func (c *Cache) stagingBuffer(n int) []byte {
	if s := c.spare; cap(s) >= n {
		c.spare = nil
		return s[:n]
	}
	return alignedHeap(n)
}

// spareStaging keeps buf, a staged reservation's buffer whose bytes are
// written, for the next staged reservation (Options.ReuseStaging): one
// buffer, the larger, so the pool is bounded by the largest layer.
func (c *Cache) spareStaging(buf []byte) {
	if c.opts.ReuseStaging && cap(buf) > cap(c.spare) {
		c.spare = buf[:0]
	}
}

// writeStaged writes packed, the bytes a packer left in a staged
// reservation's heap buffer, into the reservation's region of the file and
// maps the region read-only: the returned bytes are the mapping's, so a
// store into inserted bytes faults as it does into a finalized region. On
// an error nothing is mapped and the caller keeps the entry on the heap
// with the returned reason. Only called while rg belongs to c.w (a region
// that can no longer be committed is taken from its reservation: endWrite,
// compaction).
//
// The pwrite runs under c.mu. Nothing waits for it in a launch: the
// runtime packs and inserts on one goroutine, and a mutex and block
// profile of three cold llama-1184 launches showed no contention on c.mu
// at all. Outside the lock it would need Close, Finalize and compaction to
// wait for writes in flight, and a re-check that rg still belongs to c.w.
func (c *Cache) writeStaged(rg *region, packed []byte) ([]byte, HeapReason, error) {
	if len(packed) > 0 {
		if _, err := c.w.f.WriteAt(packed, rg.off); err != nil {
			return nil, HeapWriteFailed, fmt.Errorf("write staged bytes at %d: %w", rg.off, err)
		}
	}
	m, err := c.w.f.Map(rg.off, int(rg.length), vfs.ProtRead)
	if err != nil {
		r := HeapMapFailed
		if errors.Is(err, vfs.ErrNotSupported) {
			r = HeapNotSupported
		}
		return nil, r, fmt.Errorf("map staged region at %d: %w", rg.off, err)
	}
	c.maps = append(c.maps, m)
	rg.m, rg.protected = m, true
	return m.Bytes()[:len(packed):len(packed)], "", nil
}

// allocate reserves [off, off+length) of the file for a region. The live
// file grows by exactly the region: other processes map it, and a v2 file
// must end in its footer. A new (temporary) file, which nobody else reads
// until the commit renames it, is instead extended ahead of the packers,
// doubling but never more than maxAhead past the region, and trimmed at the
// commit (trim): one fallocate per step instead of one per region, and how
// far the end of the file is from the stores decides the size of the page
// cache's folios, which the packers' stores and every later launch's first
// pass over the mapping pay for in opposite directions
// (DefaultAllocateAhead). When the file can (vfs.HugeFiller) and the
// distance ahead is at least a huge page, each extension ends on a huge
// page boundary and is filled into the page cache as huge folios before
// any write: a region written by itself would otherwise get folios no
// larger than its write, and every warm launch's first pass over the
// mapping would take a fault per small folio where it could take one per
// 2 MiB (docs/benchmarks.md, "First output on a shadow-paged guest"). If
// the space ahead does not fit (ENOSPC), the region alone is allocated, so
// a nearly full disk holds as much as before.
func (w *writer) allocate(off, length int64) error {
	end := off + length
	if w.temp == "" || w.maxAhead <= 0 {
		return w.f.Allocate(off, length)
	}
	if end <= w.ahead {
		return nil
	}
	target := end + min(end, w.maxAhead)
	hf, huge := w.f.(vfs.HugeFiller)
	huge = huge && w.maxAhead >= vfs.HugePageSize
	if huge {
		target = roundUp(target, vfs.HugePageSize)
	}
	err := w.f.Allocate(off, target-off)
	if err == nil {
		if huge {
			// From the first huge page boundary not yet filled: a range
			// already in the page cache (the header, the last extension)
			// keeps its folios.
			from := roundUp(max(off, w.ahead), vfs.HugePageSize)
			if from < target {
				// Only speed depends on it: where the kernel or file
				// system refuses, writes get small folios as before.
				_ = hf.FillHuge(from, target-from)
			}
		}
		w.ahead = target
		return nil
	}
	if !errors.Is(err, syscall.ENOSPC) {
		return err
	}
	if err := w.f.Allocate(off, length); err != nil {
		return err
	}
	w.ahead = end
	return nil
}

// trim cuts a temporary file back to size, the end of what the commit
// names, before the index is written there. Only a temporary file is ever
// extended ahead (allocate), and no other process can have it mapped.
func (w *writer) trim() error {
	if w.ahead <= w.size {
		return nil
	}
	if err := w.f.Truncate(w.size); err != nil {
		return err
	}
	w.ahead = 0
	return nil
}

// finishRegions writes back the regions that hold inserted entries
// (msync MS_SYNC: the index may only name durable data, G2, and clean pages
// are what G5 asks for) and maps them read-only. With all set (Finalize) it
// also protects regions nothing was inserted into, except those of
// reservations still outstanding: two threads may run the same program
// through one cache, and the other one may still be packing into its
// reservation, where a read-only page would turn its next store into a
// SIGSEGV (G6). Such a reservation ends with the Finalize (its region is
// garbage, its insert falls back to the heap) but its pages stay writable.
func (c *Cache) finishRegions(all bool) {
	if c.w == nil {
		return
	}
	outstanding := map[*region]bool{}
	for _, r := range c.reservations {
		if r.pages != nil {
			outstanding[r.pages] = true
		}
	}
	var pending []*region
	for _, rg := range c.w.regions {
		if rg.used && !rg.synced {
			pending = append(pending, rg)
		}
	}
	if len(pending) > 0 {
		c.syncRegions(pending)
	}
	for _, rg := range c.w.regions {
		// A staged region is mapped read-only at its insert, or not at
		// all: its reservation is heap memory, which no Protect touches.
		if rg.m != nil && (rg.used || all && !outstanding[rg]) && !rg.protected {
			// A failed mprotect leaves the pages writable, which costs
			// protection against stray stores but not correctness.
			_ = rg.m.Protect(vfs.ProtRead)
			rg.protected = true
		}
	}
}

// reterminateV2 ends a live v2 file that grew after its last commit (the
// write failed or was abandoned after appending) with that commit's index
// again. A v2 file is found only through the footer at its end, so without
// this one failed append would make every reader reject the file and lose
// every saved entry although nothing crashed. The index goes after
// everything written, including a partly written index. If this write fails
// too the file stays unreadable until the next writer replaces it, as after
// a crash (docs/cache.md, "What v2 gives up").
func (c *Cache) reterminateV2(w *writer) {
	if c.opts.Format != spec.FormatV2 || w.temp != "" || len(c.disk.v2Entries) == 0 {
		return
	}
	end, err := w.f.Size()
	if err != nil || end <= c.disk.size {
		return
	}
	b := spec.EncodeV2Index(uint64(end), c.disk.v2Entries)
	if _, err := w.f.WriteAt(b, end); err != nil {
		return
	}
	if err := w.f.SyncData(); err != nil {
		return
	}
	c.disk.size = end + int64(len(b))
	c.disk.indexLen = int64(len(b))
}

// syncRegions makes the stores into the regions durable and their pages
// clean. One region is msync'ed (MS_SYNC): on Linux that is an fsync of the
// mapped range of the file (vfs_fsync_range), so it also writes back the
// bytes writeStaged wrote with pwrite into a staged region; several are
// written back by one fdatasync of the file, which on Linux writes back
// every dirty page of the file, mapped stores included, and cleans them
// just as msync(MS_SYNC) does (msync(MS_SYNC) is an fsync of the range):
// one disk flush instead of one per region (docs/cache.md has the measured
// difference).
func (c *Cache) syncRegions(rs []*region) {
	var err error
	if len(rs) == 1 {
		err = rs[0].m.Sync()
	} else {
		err = c.w.f.SyncData()
	}
	for _, rg := range rs {
		if err != nil {
			c.stats.FallbackErr = err
			c.dropRegionEntries(rg)
		}
		rg.synced = true
	}
}

// dropRegionEntries stops a region's entries from being committed: their
// bytes are fine in memory but not known to be durable.
func (c *Cache) dropRegionEntries(rg *region) {
	for e := range c.byName.all() {
		if e.place == inFile && !e.committed && e.off() == rg.off {
			e.persist = false
		}
	}
}

// endWrite ends the write without committing anything further. Entries
// appended and not committed are kept in memory but never committed later:
// once the lock is released another writer may replace the file.
func (c *Cache) endWrite() error {
	w := c.w
	if w == nil {
		// Already ended (a commit that removed the live file ends the
		// write itself, and may still report an error to its caller).
		return nil
	}
	c.w = nil
	for e := range c.byName.all() {
		if e.place == inFile && !e.committed {
			e.persist = false
		}
	}
	for _, r := range c.reservations {
		if r.region != nil {
			r.region = nil
			r.heapReason = HeapWriteFailed
		}
	}
	c.reterminateV2(w)
	err := w.f.Close()
	if w.temp != "" {
		_ = c.fsys.Remove(w.temp)
	}
	if rerr := w.lock.release(); err == nil {
		err = rerr
	}
	return err
}
