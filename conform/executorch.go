package conform

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// executorchDesign serves a port of ExecuTorch's XNNWeightsCache as it
// ships (backends/xnnpack/runtime/XNNWeightsCache.cpp, after PR 20833),
// one instance per adapter process, so that conformance is judged on the
// behaviour of the cache this project models rather than on xpwc's cache
// with one bug put back. What it does, call by call:
//
//   - init: a path and a write fd open, nothing; entries already in
//     memory, reopen the write fd with the lock and no load (the heap
//     fall-back re-init of docs/bugs.md); else load the trailer under a
//     shared lock and keep the file open (the read-only mapping keeps the
//     lock's description alive, so the exclusive lock that follows fails
//     and a loaded instance has no write fd); else a fresh write: the
//     exclusive lock, held until destroy, and the file truncated to zero in
//     place. Either lock failing sends the instance to the heap.
//   - look-up: the key is the weight and bias names and the seed; the
//     fingerprint and the source are not asked.
//   - reserve: the heap after a load (loaded_from_disk_), else page-aligned
//     space at the end of the file (ftruncate), else the heap.
//   - finalize: commits (writes a trailer) when space was reserved in the
//     file since the last save; save does the same and writes a footer-only
//     trailer when the instance holds the write fd and never reserved.
//   - invalidate: there is none.
//   - delete_program: releases the program's entries; when none is left the
//     fd closes, dropping the lock.
//
// The trailer (spec v2) is the only commit point and nothing is checked
// beyond it.
const executorchDesign = "executorch"

// etPage is the page size ExecuTorch rounds file regions to on Linux.
const etPage = 4096

type etMeta struct {
	key      spec.Key // weight, bias and seed
	slot     int
	size     int
	fromLoad bool
	inCur    bool
	refs     int
	fileOff  int64 // -1: on the heap
}

// etCache is one XNNWeightsCache instance.
type etCache struct {
	fsys                   vfs.FS
	path                   string
	fd                     vfs.File // the write fd with its exclusive lock; nil is -1
	mapping                vfs.File // the load's read-only file, kept as its mapping is
	meta                   map[string]*etMeta
	heap                   map[int][]byte // slot → bytes of a heap packing
	slots                  int
	used                   int64
	regions, regionsAtSave int
	loaded                 bool // loaded_from_disk_, never reset
	kept                   bool // the last init ran no loader
	final                  bool
	progs                  map[string][]string // program → names finalize returned
	prog                   string
	pending                map[uint64]int64 // reservation → file offset (-1 heap)
	nextRes                uint64
	stats                  cache.Stats
}

func openExecuTorch(path string, fsys vfs.FS) (sim.Instance, error) {
	return &etCache{fsys: fsys, path: path, meta: map[string]*etMeta{}, heap: map[int][]byte{},
		progs: map[string][]string{}, pending: map[uint64]int64{}}, nil
}

func (c *etCache) Path() string { return c.path }

// openLocked is open_locked: the file and a non-blocking exclusive lock.
func (c *etCache) openLocked(flag int) vfs.File {
	f, err := c.fsys.OpenFile(c.path, flag, 0o600)
	if err != nil {
		c.stats.FallbackErr = err
		return nil
	}
	if err := f.Lock(vfs.LockExclusive, false); err != nil {
		_ = f.Close()
		c.stats.FallbackErr = err
		if errors.Is(err, vfs.ErrWouldBlock) {
			c.stats.FallbackErr = fmt.Errorf("conform: flock: %w", err)
		}
		return nil
	}
	c.stats.FallbackErr = nil
	return f
}

func (c *etCache) InitializeForProgram(p string) error {
	c.final, c.prog = false, p
	c.kept = c.path == "" || c.fd != nil || len(c.meta) > 0
	if c.kept {
		// No loader runs: the instance keeps the view it has (protocol 2
		// says kept). Protocol 1 has no word for that; ok says the view is
		// the instance's own.
		c.stats.Load, c.stats.LoadErr = spec.LoadOK, nil
	}
	if c.path == "" || c.fd != nil {
		return nil
	}
	if len(c.meta) > 0 {
		// The heap fall-back's re-init: the lock, and no load, so the
		// next reservation starts at offset 0 of a file others committed.
		c.fd = c.openLocked(os.O_RDWR)
		return nil
	}
	if c.load() {
		c.stats.Load, c.stats.LoadErr = spec.LoadOK, nil
		c.fd = c.openLocked(os.O_RDWR)
		return nil
	}
	c.fd = c.openLocked(os.O_RDWR | os.O_CREATE)
	if c.fd == nil {
		if errors.Is(c.stats.FallbackErr, vfs.ErrWouldBlock) {
			c.stats.Load, c.stats.LoadErr = spec.LoadLocked, c.stats.FallbackErr
		}
		return nil
	}
	if err := c.fd.Truncate(0); err != nil {
		_ = c.fd.Close()
		c.fd = nil
		return nil
	}
	// reset_for_fresh_write: file-backed entries go, heap ones stay.
	c.used, c.regions = 0, 0
	for n, m := range c.meta {
		if m.fileOff >= 0 {
			delete(c.meta, n)
		}
	}
	return nil
}

// load is load_packed_cache; it sets the load outcome it met.
func (c *etCache) load() bool {
	f, err := c.fsys.OpenFile(c.path, os.O_RDONLY, 0)
	if err != nil {
		c.stats.Load, c.stats.LoadErr = spec.LoadMissing, nil
		if !errors.Is(err, fs.ErrNotExist) {
			c.stats.Load, c.stats.LoadErr = spec.LoadFailed, err
		}
		return false
	}
	if err := f.Lock(vfs.LockShared, false); err != nil {
		_ = f.Close()
		c.stats.Load, c.stats.LoadErr = spec.LoadLocked, fmt.Errorf("conform: flock: %w", err)
		return false
	}
	reject := func(why string) bool {
		_ = f.Close()
		c.stats.Load, c.stats.LoadErr = spec.LoadRejected, errors.New(why)
		return false
	}
	size, err := f.Size()
	if err != nil || size < spec.V2FooterSize {
		return reject("shorter than a footer")
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return reject(err.Error())
	}
	le := binary.LittleEndian
	foot := b[size-spec.V2FooterSize:]
	start, count := int64(le.Uint64(foot)), le.Uint32(foot[8:])
	if le.Uint32(foot[12:]) != spec.V2Magic || le.Uint32(foot[16:]) != spec.V2Version || start >= size-spec.V2FooterSize || start < 0 {
		return reject("bad footer")
	}
	end := size - spec.V2FooterSize
	pos := start
	meta := map[string]*etMeta{}
	for i := uint32(0); i < count && pos+4 <= end; i++ {
		nl := int64(le.Uint32(b[pos:]))
		if pos+4+nl+20 > end {
			return reject("entry overruns the index")
		}
		name := string(b[pos+4 : pos+4+nl])
		q := pos + 4 + nl
		off, sz, seed := int64(le.Uint64(b[q:])), int64(le.Uint64(b[q+8:])), le.Uint32(b[q+16:])
		if off >= start || sz > start-off {
			return reject("entry outside the data")
		}
		c.slots++
		meta[name] = &etMeta{key: spec.Key{Weight: name, Seed: seed}, slot: c.slots, size: int(sz), fromLoad: true, fileOff: off}
		pos = q + 20
	}
	c.meta, c.mapping = meta, f
	c.used, c.regions, c.regionsAtSave, c.loaded = size, len(meta), len(meta), true
	return true
}

func etName(k spec.Key) string { return k.Weight + k.Bias }

func (c *etCache) LookUp(k spec.Key) (sim.Handle, bool) {
	m, ok := c.meta[etName(k)]
	if !ok || m.key.Seed != k.Seed {
		return 0, false
	}
	m.inCur = true
	return sim.Handle(m.slot), true
}

func (c *etCache) Bytes(h sim.Handle) ([]byte, error) {
	for _, m := range c.meta {
		if m.slot != int(h) {
			continue
		}
		if m.fileOff < 0 {
			return c.heap[m.slot], nil
		}
		f := c.fd
		if f == nil {
			f = c.mapping
		}
		if f == nil {
			return nil, cache.ErrStaleHandle
		}
		b := make([]byte, m.size)
		if _, err := f.ReadAt(b, m.fileOff); err != nil {
			return nil, fmt.Errorf("read of a mapped region: %w", err)
		}
		return b, nil
	}
	return nil, cache.ErrStaleHandle
}

func (c *etCache) ReserveSpace(n int) (sim.Reservation, error) {
	c.nextRes++
	id := c.nextRes
	r := sim.Reservation{ID: id, Buf: make([]byte, n)}
	c.pending[id] = -1
	if c.loaded {
		c.stats.FallbackErr = errRepackAfterLoad
		return r, nil
	}
	if c.fd == nil {
		return r, nil
	}
	off := (c.used + etPage - 1) &^ (etPage - 1)
	size := (int64(n) + etPage - 1) &^ (etPage - 1)
	if err := c.fd.Truncate(off + size); err != nil {
		_ = c.fd.Close()
		c.fd = nil
		c.stats.FallbackErr = err
		return r, nil
	}
	c.used = off + size
	c.regions++
	c.pending[id] = off
	r.InFile = true
	return r, nil
}

func (c *etCache) Insert(k spec.Key, r sim.Reservation) error {
	off, ok := c.pending[r.ID]
	if !ok {
		return fmt.Errorf("insert: no reservation %d", r.ID)
	}
	delete(c.pending, r.ID)
	if off >= 0 {
		// The packer wrote through the MAP_SHARED mapping.
		if _, err := c.fd.WriteAt(r.Buf, off); err != nil {
			return err
		}
	}
	if m, ok := c.meta[etName(k)]; ok && m.key.Seed == k.Seed {
		return nil // a hit: the bytes are compared and the new ones dropped
	}
	c.slots++
	m := &etMeta{key: spec.Key{Weight: etName(k), Seed: k.Seed}, slot: c.slots, size: len(r.Buf), inCur: true, fileOff: off}
	if off < 0 {
		c.heap[c.slots] = r.Buf
	}
	c.meta[etName(k)] = m
	return nil
}

func (c *etCache) IsFinalized() (bool, error) { return c.final, nil }

func (c *etCache) Finalize() error {
	c.final = true
	var names []string
	for n, m := range c.meta {
		if m.inCur {
			m.refs++
			m.inCur = false
			names = append(names, n)
		}
	}
	c.progs[c.prog] = append(c.progs[c.prog], names...)
	if c.path != "" && c.regions > c.regionsAtSave {
		_ = c.save()
	}
	return nil
}

func (c *etCache) Save() error { return c.save() }

// save is save_packed_index.
func (c *etCache) save() error {
	if c.fd == nil {
		return nil
	}
	if c.regions == c.regionsAtSave && c.regionsAtSave > 0 {
		return nil
	}
	var es []spec.Entry
	for _, m := range c.meta {
		if m.fileOff >= 0 {
			es = append(es, spec.Entry{Key: m.key, Offset: uint64(m.fileOff), Size: uint64(m.size)})
		}
	}
	buf := spec.EncodeV2Index(uint64(c.used), es)
	if err := c.fd.Truncate(c.used + int64(len(buf))); err != nil {
		return err
	}
	if _, err := c.fd.WriteAt(buf, c.used); err != nil {
		return err
	}
	_ = c.fd.Sync()
	for _, m := range c.meta {
		if m.fileOff >= 0 {
			m.fromLoad = true
		}
	}
	c.regionsAtSave = c.regions
	c.used += int64(len(buf))
	return nil
}

// errRepackAfterLoad is why a loaded instance packs to the heap
// (loaded_from_disk_; ExecuTorch's telemetry calls it RepackAfterLoad).
var errRepackAfterLoad = errors.New("conform: a re-pack after a load goes to the heap")

// Invalidate: ExecuTorch's cache has no per-entry invalidation (protocol
// 2 answers unsupported).
func (c *etCache) Invalidate(string) error {
	return &sim.UnsupportedError{Op: OpInvalidate, Msg: "ExecuTorch's cache has no per-entry invalidation"}
}

// KeptView implements sim.ViewKeeper: the last init ran no loader.
func (c *etCache) KeptView() bool { return c.kept }

func (c *etCache) DeleteProgram(p string) error {
	if !c.final {
		return errors.New("delete_packed_data before finalize_for_runtime")
	}
	names := c.progs[p]
	delete(c.progs, p)
	for _, n := range names {
		m, ok := c.meta[n]
		if !ok {
			return fmt.Errorf("delete_packed_data: %q not found", n)
		}
		if m.refs--; m.refs > 0 {
			continue
		}
		if m.fromLoad {
			m.inCur = false
			continue
		}
		delete(c.heap, m.slot)
		delete(c.meta, n)
	}
	if len(c.meta) == 0 {
		// full_unload: the fd closes and the lock goes with it.
		c.closeFiles()
	}
	return nil
}

func (c *etCache) closeFiles() {
	if c.fd != nil {
		_ = c.fd.Close()
		c.fd = nil
	}
	if c.mapping != nil {
		_ = c.mapping.Close()
		c.mapping = nil
	}
}

func (c *etCache) Close() error { c.closeFiles(); return nil }

func (c *etCache) Kill() { c.closeFiles() }

func (c *etCache) Stats() cache.Stats { return c.stats }

func (c *etCache) Names() []string {
	var out []string
	for n := range c.meta {
		out = append(out, n)
	}
	return out
}

func (c *etCache) Fault() error { return nil }
