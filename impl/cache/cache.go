package cache

import (
	"fmt"
	"github.com/xpwc/xpwc/internal/rawmem"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"weak"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// Handle names an entry handed out by LookUp or LookUpOrInsert. It is an
// opaque, never-reused identifier, not a slot index: a handle of a released
// entry stays invalid forever (ExecuTorch's slot indices could dangle or be
// reused after a reset). The zero Handle is never valid.
type Handle struct {
	// cache tags handles with their cache, so a handle of another cache is
	// stale here instead of naming whichever entry has the same id.
	cache, id uint64
}

func (c *Cache) handle(e *entry) Handle { return Handle{cache: c.tag, id: e.id} }

func (e *entry) key() *spec.Key { return &e.rec.Key }

// bytes is the entry's data; its capacity is its length, so appends
// cannot spill.
func (e *entry) bytes() []byte { return rawmem.Slice(e.base, int(e.rec.Size)) }

// off is the entry's offset in the live file (inFile).
func (e *entry) off() int64 { return int64(e.rec.Offset) }

// crc is the spec.DataChecksum of the entry's data (v3); 0 in v2.
func (e *entry) crc() uint32 { return e.rec.CRC }

func (e *entry) copyID() uint64 { return e.rec.CopyID }

// setOff records that the entry's bytes are at off in the live file now.
func (e *entry) setOff(off int64) {
	if e.off() != off {
		r := *e.rec
		r.Offset = uint64(off)
		e.rec = &r
	}
}

// Valid reports whether h was issued at all (not whether it is still live).
func (h Handle) Valid() bool { return h.id != 0 }

// placement is where an entry's bytes live.
type placement uint8

const (
	inHeap placement = iota + 1
	inFile
)

// entry is one packed weight known to this cache.
type entry struct {
	id uint64
	// rec is the entry's key and, for a file entry, its offset in the live
	// file, its data checksum (v3; 0 in v2) and the copy identity of the
	// packing in v3 files (spec.Entry.CopyID: new for every packing this
	// cache writes, carried over from the file for loaded ones; 0 for v2
	// and heap entries). A loaded entry's points into the parsed index,
	// which a load keeps anyway, so a warm launch copies no key or
	// field of a weight into a new page. It is never written through:
	// the parsed index of a v2 file is also diskView.v2Entries, so a
	// change makes a new record (setOff, adoptCarried).
	rec *spec.Entry
	// base is the first byte of the entry's data (nil once released), the
	// rec.Size bytes from it (bytes): 8 bytes an entry instead of a slice's
	// 24, a page less per 170 entries of a warm launch, each a page fault
	// in a fresh process (TestWarmLoadAllocationBound).
	base *byte
	// refs counts programs using the entry. It is the size of a set, so it
	// can neither wrap nor go negative (ExecuTorch latent bug 6a).
	refs       int32
	heapReason heapCode
	place      placement
	// The flags follow the small fields so that the struct has no padding
	// between fields: a warm launch allocates one entry per weight.

	// v2Key is set for entries read from a v2 file: only the concatenated
	// name and the seed are known, so look-ups compare only those.
	v2Key bool
	// carried: read from a file of the format the caller did not name; its
	// bytes live in that file's mapping until a commit rewrites them into
	// a file of the configured format.
	carried bool
	// committed: listed in the newest commit this cache knows of (loaded or
	// written by it). persist: may be listed in the next commit; false for
	// file bytes whose msync or commit failed, which must never be indexed
	// (G2: an index only names durable data).
	committed, persist bool
	// indexed: the entry is the current one for its name (byName).
	indexed bool
	// verified: the data checksum was checked by this cache (G1); failed:
	// and it did not hold, so no handle to the entry gives its bytes again.
	verified, failed bool
}

// reservation is space handed out by ReserveSpace and not inserted yet.
type reservation struct {
	buf        []byte
	region     *region // nil for heap, or once the region can no longer be committed
	heapReason HeapReason
	// pages is the mapped region buf lies in, kept when region is cleared
	// (a write session ended, a compaction): the packer may still be
	// storing into it, so it must stay writable while outstanding.
	pages *region
}

// region is a span appended to the live file. With Options.MappedWrites it
// is mapped read-write for a packer, and Finalize syncs it and turns it
// read-only. A staged region (the default) is not mapped until its insert
// writes the packed bytes into it (writeStaged), and then read-only: m is
// nil until then.
type region struct {
	m         vfs.Mapping
	off       int64
	length    int64
	staged    bool
	used      bool // an inserted entry lives in it
	synced    bool // msync(MS_SYNC) succeeded
	protected bool
}

// Cache is a persistent cache of packed weights. All methods are safe for
// concurrent use; each is atomic with respect to the others. The runtime
// serializes program creation (InitializeForProgram … Finalize) on one
// cache, as ExecuTorch's backend does with the cache mutex; the provider
// calls in between may come from several goroutines.
type Cache struct {
	mu sync.Mutex
	// closeMu is held through Close, which lets go of mu while it waits
	// for the prefault walks (a verifying walk takes mu between entries):
	// a second Close returns only once the first has unmapped.
	closeMu sync.Mutex

	opts     Options
	tag      uint64 // random, see Handle
	fsys     vfs.FS
	pageSize int
	dir      string

	closed bool

	nextID   uint64
	byName   nameIndex         // current entry per name
	handles  handleTable       // every live entry
	programs map[string]*idSet // entries each program references
	// tombstones are committed entries dropped from the index since the last
	// commit (invalidated, stale, corrupt); a merge with the file must not
	// bring them back, and their presence makes the next commit necessary.
	tombstones map[entryName]tombstone
	// carriedNames are the names (as the file of the other format gives
	// them) of the entries carried over from it, so a later merge of the
	// same file does not carry them twice.
	carriedNames map[entryName]struct{}

	active string // program being initialized, "" if none
	// activeIDs is programs[active] (nil with no active program), kept by
	// setActive: every look-up of a launch adds to it, and finding it in
	// programs by name cost a string hash and probe each time, 110
	// instructions a look-up (a twentieth of a warm core).
	activeIDs *idSet
	// initialized: InitializeForProgram ran once, so the file was loaded
	// (or found unusable) and look-ups see what it holds.
	initialized bool
	finalized   bool
	// unreserved counts look-ups that missed and no reservation has
	// followed yet: every packer reserves after its own miss, so after
	// Finalize a reservation with none open is no re-pack and no late
	// packer thread, and is refused (ErrNoMiss).
	unreserved int
	// unsaved are the file entries inserted since the last commit
	// attempt; Close reports those still uncommitted (ErrUncommitted).
	unsaved []*entry
	// lastLookupUnnamed sends the next reservation to heap: unnamed
	// constants are never persisted (ExecuTorch #20833).
	lastLookupUnnamed bool
	missReason        map[entryName]RepackReason
	// spare is a staging buffer whose bytes were written, for the next
	// staged reservation that fits (Options.ReuseStaging); nil when none.
	spare []byte

	reservations map[*byte]*reservation
	// inserted holds the reservations inserted since the last Finalize, so
	// a second insert of one is ErrAlreadyInserted, not ErrNotReserved.
	inserted map[*byte]struct{}
	// insertedStaged is inserted for staged reservations (heap buffers the
	// cache allocated), by address, held weakly.
	insertedStaged map[uintptr]weak.Pointer[byte]
	maps           []vfs.Mapping // every mapping, unmapped at Close
	// prefaults populate (or check, unless Options.DisableVerifyAhead) mappings of
	// committed data (unless Options.DisablePrefault); Close stops and waits for them
	// before it unmaps.
	prefaults []*prefaulter
	// pendingWalks are the walks loads prepared and the program's init has
	// not started yet (startWalks).
	pendingWalks []pendingWalk
	// checks counts the data checks Bytes makes without c.mu: Close waits
	// for them before it unmaps.
	checks sync.WaitGroup
	// aheadChecked, when set (tests, before the first load), is called by
	// a verifying walk between an entry's checksum and its record.
	aheadChecked func(*entry)
	// computeChecked, when set (tests), is called by Bytes between an
	// entry's checksum, made without c.mu, and its record.
	computeChecked func(*entry)
	// aheadWindow, when set (tests, before the first load), replaces the
	// verifying walk's window (the aheadWindow constant).
	aheadWindow int64

	// loaded reports that the committed index was read at least once.
	loaded bool
	// fileReason is set when the file cannot be used for this launch; every
	// reservation goes to heap with it. blocked is the same for the
	// current program only (lock busy, allocation failed).
	fileReason HeapReason
	blocked    HeapReason
	// readOnly: Options.ReadOnly, or a write was refused (EROFS, EACCES,
	// EPERM: writeRefused). Loads and hits go on; nothing is written.
	readOnly bool
	// detectFormat: Options.Format was left unknown, so opts.Format follows
	// the format of the file found at the path (v3 until one is found).
	detectFormat bool

	disk diskView
	w    *writer

	stats Stats
}

// diskView is what this cache knows about the live file.
type diskView struct {
	format     spec.Format
	size       int64
	generation uint64
	header     int64 // header bytes (v3: one page; v2: 0)
	indexLen   int64 // bytes of the committed index block (v2: index and footer)
	recPage    int   // page size recorded in v3 commits
	// v2Entries is the index of the last v2 commit, kept so that a write
	// that fails after growing the file can end it with that index again.
	v2Entries []spec.Entry
}

// Open returns a cache for opts. It touches no file: the committed index is
// loaded by the first InitializeForProgram. It fails only for invalid
// options; a bad, missing or locked file yields a working cache and a reason
// in Stats (G8).
func Open(opts Options) (*Cache, error) {
	o, err := opts.normalized()
	if err != nil {
		return nil, err
	}
	c := &Cache{
		opts:           o,
		tag:            rand.Uint64() | 1,
		fsys:           o.FS,
		pageSize:       o.FS.PageSize(),
		programs:       map[string]*idSet{},
		tombstones:     map[entryName]tombstone{},
		carriedNames:   map[entryName]struct{}{},
		missReason:     map[entryName]RepackReason{},
		reservations:   map[*byte]*reservation{},
		inserted:       map[*byte]struct{}{},
		insertedStaged: map[uintptr]weak.Pointer[byte]{},
	}
	c.stats.Repacks = map[RepackReason]uint64{}
	switch {
	case o.Path == "":
		c.fileReason = HeapNoPath
		c.stats.Load = spec.LoadDisabled
	case c.pageSize > spec.MaxPageSize || c.pageSize <= 0:
		// v3 records the page size and accepts at most 64 KiB; regions
		// must be page-aligned to be mapped. Such a platform packs to heap
		// rather than writing files every reader rejects.
		c.fileReason = HeapNotSupported
		c.stats.Load = spec.LoadFailed
		c.stats.LoadErr = fmt.Errorf("cache: page size %d: %w", c.pageSize, vfs.ErrNotSupported)
	default:
		// A link at the path stays a link: its target is what is read,
		// locked, and replaced by rename (docs/paths.md).
		if target, err := o.FS.Resolve(o.Path); err == nil {
			c.opts.Path = target
		}
		c.dir = filepath.Dir(c.opts.Path)
		c.readOnly = o.ReadOnly
		if o.CheckPath {
			if err := c.checkPath(); err != nil {
				return nil, err
			}
		}
	}
	if o.Format == spec.FormatUnknown {
		// No format named: the file's is used once one is found
		// (parseFile); until then, and for a new file, v3.
		c.detectFormat = o.Path != ""
		c.opts.Format = spec.FormatV3
	}
	c.byName.init(c.opts.Format == spec.FormatV2)
	return c, nil
}

// Path is the cache file path ("" for a heap-only cache): the target of a
// symbolic link given as Options.Path.
func (c *Cache) Path() string { return c.opts.Path }

// Close releases the cache: it ends any write without committing, releases
// the lock and unmaps every mapping. Every handle and every slice from Bytes
// or ReserveSpace is invalid afterwards. Entries packed into the file and
// never committed (no Finalize or Save since their insert) are lost, and
// Close says so: it returns ErrUncommitted with their number, bytes and
// first name, having released everything all the same. That is the only
// error: a resource that cannot be given back is recorded in
// Stats.ReleaseErr, since a backend's destroy must not fail because of the
// cache (G8).
func (c *Cache) Close() error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	lost := c.uncommitted()
	if c.w != nil {
		c.noteRelease(c.endWrite())
	}
	walks := c.prefaults
	c.prefaults, c.pendingWalks = nil, nil
	c.mu.Unlock()
	// Without mu: a verifying walk takes it between entries, and finds the
	// cache closed. Every other call finds it closed meanwhile too.
	for _, p := range walks {
		p.wait()
	}
	c.checks.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.maps {
		c.noteRelease(m.Close())
	}
	c.maps = nil
	c.byName.init(c.opts.Format == spec.FormatV2)
	c.handles, c.programs = handleTable{}, map[string]*idSet{}
	c.reservations = map[*byte]*reservation{}
	c.inserted = map[*byte]struct{}{}
	c.insertedStaged = map[uintptr]weak.Pointer[byte]{}
	return lost
}

// uncommitted describes the entries inserted into the file since the last
// commit attempt that no commit names, or nil.
func (c *Cache) uncommitted() error {
	var n, size int
	var first string
	for _, e := range c.unsaved {
		if e.indexed && e.place == inFile && e.persist && !e.committed {
			if n == 0 {
				first = e.key().Weight
			}
			n++
			size += len(e.bytes())
		}
	}
	c.unsaved = nil
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d entries (%d bytes, the first %q) in %s; call Finalize or Save before Close", ErrUncommitted, n, size, first, c.opts.Path)
}

// noteRelease records the first failure to give back a resource (a file,
// the lock, a mapping) in Stats.ReleaseErr. Nothing committed depends on
// it: every commit is synced before its commit point (G2), and the kernel
// drops a dead process's descriptors, locks and mappings anyway.
func (c *Cache) noteRelease(err error) {
	if err != nil && c.stats.ReleaseErr == nil {
		c.stats.ReleaseErr = fmt.Errorf("cache: release %s: %w", c.opts.Path, err)
	}
}

// entryName is the identity under which an entry is indexed: weight and
// bias names (a struct, so a look-up allocates nothing), or in v2 mode the
// ambiguous concatenation in w, which is all a v2 file can store.
type entryName struct{ w, b string }

func (n entryName) String() string { return n.w + "+" + n.b }

func (c *Cache) name(k spec.Key) entryName {
	if c.opts.Format == spec.FormatV2 {
		return entryName{w: k.V2Name()}
	}
	return entryName{k.Weight, k.Bias}
}

// matches reports whether stored entry e serves key k (G1). e is the
// entry indexed under k's name (find). A v3 cache's index compared both
// names, so only the other fields are compared here: comparing the whole
// key compared the names a second time, about 100 instructions a warm v3
// look-up. A v2 cache's index compared only their concatenation.
func (c *Cache) matches(e *entry, k spec.Key) bool {
	ek := e.key()
	switch {
	case e.v2Key:
		return ek.Seed == k.Seed
	case c.byName.concat:
		return *ek == k
	}
	return ek.Seed == k.Seed && ek.Fingerprint == k.Fingerprint && ek.Source == k.Source
}

// mismatchReason says which field made e stale for k.
func mismatchReason(e *entry, k spec.Key) RepackReason {
	switch {
	case e.key().Seed != k.Seed:
		return RepackSeed
	case e.v2Key:
		return RepackNew
	case e.key().Fingerprint != k.Fingerprint:
		return RepackFingerprint
	case e.key().Source != k.Source:
		return RepackSource
	}
	return RepackNew
}

func (c *Cache) newEntry(k spec.Key, data []byte) *entry {
	c.nextID++
	// The entry and its record in one allocation.
	er := &struct {
		e entry
		r spec.Entry
	}{r: spec.Entry{Key: k, Size: uint64(len(data))}}
	e := &er.e
	e.id, e.rec, e.base = c.nextID, &er.r, rawmem.Base(data)
	c.handles.add(e)
	return e
}

func (c *Cache) index(e *entry) {
	c.byName.put(e)
	e.indexed = true
}

// unindex removes e from the index. A committed entry leaves a tombstone so
// the next commit drops it (G3); the entry itself lives on while programs
// reference it, so their handles keep returning its (still correct) bytes.
func (c *Cache) unindex(e *entry) {
	if !e.indexed {
		return
	}
	c.byName.remove(e)
	e.indexed = false
	if e.committed {
		c.tombstones[c.name(*e.key())] = tombstone{key: *e.key(), copyID: e.copyID(), span: span{e.off(), int64(len(e.bytes()))}}
		e.committed = false
	}
	e.persist = false
	c.releaseIfUnused(e)
}

// tombstone is the committed copy an unindexed entry was: the next commit
// drops it from the file if the file still lists that very copy.
type tombstone struct {
	key    spec.Key
	copyID uint64
	span   span // where the file lists it
}

// newCopyID returns a copy identity for a packing about to be written to a
// v3 file. It is random rather than counted so that it stays unique across
// files: a file replaced or recreated at the path starts no sequence again
// that could meet a tombstone or a mapping of the file before it.
func newCopyID() uint64 {
	for {
		if id := rand.Uint64(); id != 0 {
			return id
		}
	}
}

// releaseIfUnused forgets an entry nobody can reach any more.
func (c *Cache) releaseIfUnused(e *entry) {
	if e.refs == 0 && !e.indexed {
		c.handles.remove(e.id)
		e.base = nil
	}
}

// ref adds e to the active program's set.
func (c *Cache) ref(e *entry) {
	if c.activeIDs == nil {
		return
	}
	if c.activeIDs.add(e.id) {
		e.refs++
	}
}

// setActive makes program ("" for none) the active one; its set must be
// in programs already.
func (c *Cache) setActive(program string) {
	c.active, c.activeIDs = program, nil
	if program != "" {
		c.activeIDs = c.programs[program]
	}
}

// dirty reports whether a commit would change the file (G4).
func (c *Cache) dirty() bool {
	if len(c.tombstones) > 0 {
		return true
	}
	for e := range c.byName.all() {
		if e.place == inFile && e.persist && !e.committed {
			return true
		}
	}
	return false
}

// bufKey identifies a buffer ReserveSpace handed out by its first byte (a
// reservation's buffer has at least one byte of capacity, so an empty slice
// of it still has a key). A buffer of no capacity was never reserved.
func bufKey(b []byte) *byte {
	if cap(b) == 0 {
		return nil
	}
	return &b[:1][0]
}

// alignedHeap returns n zeroed bytes at a 64-byte aligned address, the
// alignment XNNPACK asks of packed weights (kPackedAllocationAlignment).
func alignedHeap(n int) []byte { return rawmem.Aligned(n, 64) }

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }
