package cache

import (
	"fmt"
	"os"
	"time"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// VerifyPolicy says when the checksum of committed data is checked (G1). v2
// files carry no data checksums, so for them every policy is VerifyOff.
type VerifyPolicy int

const (
	// VerifyDefault, the zero value, is DefaultVerifyData: the policy the
	// benchmarks chose, so Options{} needs no policy named.
	VerifyDefault VerifyPolicy = iota
	// VerifyOnFirstUse checks an entry's data the first time this Cache
	// hands it out, so a warm launch pays one CRC pass over the weights it
	// actually uses, and a corrupt entry becomes a miss and is re-packed.
	// docs/cache.md has the measured cost.
	VerifyOnFirstUse
	// VerifyOnLoad checks every committed entry when the index is loaded,
	// including entries the program never uses.
	VerifyOnLoad
	// VerifyOff trusts data bytes once the index's checksum holds: corruption
	// after commit (bit rot, a foreign writer) goes unnoticed.
	VerifyOff
	// VerifyOnCompute checks an entry's data at the first Bytes of a handle
	// to it in this Cache: the call a runtime makes for the bytes it is
	// about to compute with, so verification leaves initialization and
	// reads each weight while the compute is about to read it anyway. A
	// look-up hands the handle out unchecked. When the check fails, Bytes
	// returns ErrCorruptData, the entry leaves the index (its next look-up
	// misses with reason corrupt) and the caller re-packs. Only for callers
	// that read packed bytes through Bytes: XNNPACK's operators read the
	// pointer a look-up returned, for which VerifyOnFirstUse is the check.
	// In Go every packed byte is reached through Bytes, so it is the
	// default (DefaultVerifyData).
	VerifyOnCompute
)

// DefaultVerifyData is the policy of VerifyDefault, the zero value: each
// entry is checked at the first Bytes of a handle to it, which a runtime
// calls right before the compute reads the bytes anyway, so initialization
// checks nothing (docs/cache.md, "Data verification"; the runtime's and
// simrun's launches use it too).
const DefaultVerifyData = VerifyOnCompute

// ID is the policy's name in spec's policy table (spec.VerifyPolicies),
// the name flags and reports use (VerifyDefault's is DefaultVerifyData's);
// "" for a value that is no policy.
func (p VerifyPolicy) ID() spec.VerifyPolicyID {
	switch p {
	case VerifyOnFirstUse:
		return spec.VerifyOnFirstUse
	case VerifyOnLoad:
		return spec.VerifyOnLoad
	case VerifyOff:
		return spec.VerifyOff
	case VerifyOnCompute:
		return spec.VerifyOnCompute
	case VerifyDefault:
		return DefaultVerifyData.ID()
	}
	return ""
}

func (p VerifyPolicy) String() string {
	if id := p.ID(); id != "" {
		return string(id)
	}
	return fmt.Sprintf("VerifyPolicy(%d)", int(p))
}

// PolicyByID returns the policy spec names id; ok is false for an ID that
// is not in spec.VerifyPolicies.
func PolicyByID(id spec.VerifyPolicyID) (p VerifyPolicy, ok bool) {
	for p := VerifyOnFirstUse; p <= VerifyOnCompute; p++ {
		if p.ID() == id {
			return p, true
		}
	}
	return 0, false
}

// DefaultCompactGarbageRatio bounds garbage to half the live bytes: a file
// stays within 1.5 times what a fresh rewrite would need (G4).
const DefaultCompactGarbageRatio = 0.5

// DefaultAllocateAhead is how far a new cache file is allocated ahead of
// the reservations being packed into it. Measured on Linux 6.18 / ext4 with
// a 600 MB cache (docs/benchmarks.md, "How far ahead a new file is
// allocated"): 16 MiB ahead makes the packers' stores of a cold launch
// faster than growing the file region by region and leaves the page cache
// in the same small folios; allocating hundreds of MiB ahead gives large
// folios, so a warm launch's first pass over the mapping takes a quarter of
// the page faults, but makes every store of the cold launch slower (about
// 1 s more for 600 MB). Those figures are of stores through read-write
// mappings (MappedWrites); with staged writes, the default, the setting
// hardly changed either figure (docs/benchmarks.md, "Staged writes").
// Since then an extension at least this far ahead ends on a 2 MiB boundary
// and is filled with huge folios before any write (writer.allocate), so
// the folio size no longer depends on it.
const DefaultAllocateAhead = 16 << 20

// DefaultFileMode is the permission of a new cache file: owner only, as
// ExecuTorch creates its files. Packed weights are derived from the model;
// a cache readable by every user of a device leaks it.
const DefaultFileMode os.FileMode = 0o600

// Options configure a Cache. The zero value of every field is its measured
// default (docs/cache.md, "API"): Options{Path: p} is the cache the
// runtime and simrun launch with, and Options{} a heap-only one.
type Options struct {
	// Path is the cache file. "" means the cache never touches a file (G6).
	// The lock file is Path+".lock" and temporary files Path+".tmp-*", in
	// the same directory; the directory must exist.
	Path string
	// FS is the filesystem seam; nil means vfs.OS().
	FS vfs.FS
	// Format is the file format written and expected: spec.FormatV3 or
	// spec.FormatV2 (ExecuTorch-compatible, without checksums or commit
	// point). spec.FormatUnknown, the default, takes the format of the file
	// found at Path (so an ExecuTorch file stays an ExecuTorch file), and
	// v3 for a new one. The entries of a file of the other format than a
	// named one are carried over into a new file of the named format
	// (Stats.CarriedOver, docs/paths.md).
	Format spec.Format
	// LockWait is how long to wait for a busy lock. 0 means do not wait: pack
	// to heap for this launch and record HeapLockBusy (G8). Zero is not
	// the measured wait because that wait is a function of the program's
	// size, about one cold packing of it (runtime.LockWaitFor: only so
	// long a wait let a herd of launches on one new path load what the
	// first committed), and the cache does not know the size when it
	// waits: at the load in the first InitializeForProgram, before any
	// look-up, and for a new path, the case the wait is for, with no file
	// to size it by. A caller that knows its weights sets it, as
	// runtime.Launch does.
	LockWait time.Duration
	// VerifyData says when data checksums are checked (G1). The zero
	// value, VerifyDefault, is DefaultVerifyData.
	VerifyData VerifyPolicy
	// CompactGarbageRatio is the bound on garbage/live bytes above which a
	// commit rewrites the file instead of appending to it. 0 means
	// DefaultCompactGarbageRatio; a negative value turns automatic compaction
	// off (Compact still works).
	CompactGarbageRatio float64
	// MaxIndexBytes caps the length of a file's index that the cache will
	// read; a longer one is rejected (spec.ErrIndexTooLarge) before any of
	// it is read, and the file is replaced like a damaged one. 0 means
	// spec.DefaultMaxIndexBytes (1 GiB).
	MaxIndexBytes uint64
	// FileMode is the permission of a new cache file; 0 means 0600 (as
	// ExecuTorch creates its files). A file that replaces another keeps the
	// mode of the one it replaces.
	FileMode os.FileMode
	// ReplaceForeign lets the cache replace a file at Path that is not a
	// cache file of either format (spec.Recognize). Off, such a file is
	// left untouched and every launch packs to heap with reason
	// foreign-file.
	ReplaceForeign bool
	// ReadOnly makes the cache load and serve hits but never write the
	// file or take a lock a reader does not take: misses pack to heap with
	// reason read-only, nothing is committed. A file on a read-only file
	// system is used this way without asking.
	ReadOnly bool
	// CheckPath makes Open refuse a path no file could ever be cached at
	// as configured, with a *PathError naming it: one that is not a
	// regular file (a directory, a FIFO, a device: ErrNotRegular) or whose
	// directory does not exist or is not one (ErrNoDirectory). Off, Open
	// touches no file and such a path is a heap fallback recorded in Stats
	// at the first load (G8): a runtime must not fail a launch because of
	// its cache, and the directory may be created before that load. For a
	// program that configures its path once and would rather fail at
	// start-up than run without a cache.
	CheckPath bool
	// DisablePrefault turns off the prefault goroutine. By default each
	// mapping of committed data is populated on a goroutine of its own,
	// started when the program's look-ups end (Finalize or a ReserveSpace),
	// from the mapping's end backwards, while the caller reads from its
	// start: the page faults of a warm launch's first pass over the
	// weights are shared with a second core (docs/cache.md,
	// "Prefaulting"; docs/benchmarks.md). Where mappings cannot be populated (not Linux,
	// an in-memory file system) the goroutine does nothing. Close waits
	// for it.
	DisablePrefault bool
	// DisableVerifyAhead makes the prefault goroutine only populate the
	// mapping. By default, under VerifyOnCompute on a v3 file, it checks
	// each committed entry's data instead, in file order a few MiB ahead
	// of the compute, so the compute's first Bytes of an entry the walk
	// reached finds it checked and its bytes in cache (docs/benchmarks.md). Only success is recorded: a
	// corrupt entry is found by the compute's own Bytes, as without it.
	// With DisablePrefault, or under another policy, it changes nothing
	// (docs/cache.md, "Prefaulting").
	DisableVerifyAhead bool
	// AllocateAhead is how far a new cache file (written under a temporary
	// name, read by no one until its first commit) is allocated ahead of
	// its reservations: it is extended by doubling, never more than
	// AllocateAhead past the reservation (rounded up to 2 MiB where the
	// extension is filled with huge folios), and trimmed at the commit. 0
	// means DefaultAllocateAhead; a negative value allocates each
	// reservation's region alone. A live file, which other processes map,
	// always grows by one region at a time.
	AllocateAhead int64
	// MappedWrites makes a reservation in the file a read-write mapping
	// of its region, which the packer stores into. Off (the default), the
	// writes are staged: the region is still allocated in the file at
	// ReserveSpace (a full disk is a clean heap fallback there), the
	// packer fills heap memory, and LookUpOrInsert writes the packed bytes
	// into the region with one pwrite and maps it read-only. Buffered
	// writes leave the page cache in large folios, so both the cold
	// launch's writes and a warm launch's first pass over the mapping take
	// fewer page faults (docs/cache.md, "Staged writes"); stores through a
	// mapping leave small ones.
	MappedWrites bool
	// ReuseStaging lets staged writes (MappedWrites off) reuse a staging
	// buffer once its bytes are written: the next reservation that fits
	// gets it, holding the bytes packed into it before, instead of a new
	// zeroed buffer (a cold llama-1184 launch otherwise allocates and
	// zeroes its 593 MB, which the collector then returns to the system).
	// One buffer is kept, the largest inserted, until Finalize. Only for a
	// caller that never touches a reserved buffer after its LookUpOrInsert
	// and whose packer writes every byte of it, as XNNPACK's and the
	// kernels' packers do: a second insert of a reused buffer would insert
	// whatever the reservation it now belongs to holds.
	ReuseStaging bool

	_ struct{}
}

// WithDefaults returns o with every field left zero set to its default (as
// Open uses it), or an *OptionsError for an invalid option: what a caller
// logs or compares to see the settings a Cache of o runs with.
func (o Options) WithDefaults() (Options, error) { return o.normalized() }

// normalized returns o with defaults filled in, or an *OptionsError. A
// field whose zero value means "decide from the file" keeps it: Format
// spec.FormatUnknown survives, so a Cache opened from normalized options
// (the Manager's) still takes the file's format. Only Open turns it into
// the format of a new file.
func (o Options) normalized() (Options, error) {
	switch o.Format {
	case spec.FormatUnknown, spec.FormatV2, spec.FormatV3:
	default:
		return o, &OptionsError{Field: "Format", Value: o.Format.String()}
	}
	switch o.VerifyData {
	case VerifyDefault:
		o.VerifyData = DefaultVerifyData
	case VerifyOnFirstUse, VerifyOnLoad, VerifyOff, VerifyOnCompute:
	default:
		return o, &OptionsError{Field: "VerifyData", Value: o.VerifyData.String()}
	}
	if o.LockWait < 0 {
		return o, &OptionsError{Field: "LockWait", Value: o.LockWait.String()}
	}
	if o.CompactGarbageRatio != o.CompactGarbageRatio { // NaN
		return o, &OptionsError{Field: "CompactGarbageRatio", Value: "NaN"}
	}
	if o.CompactGarbageRatio == 0 {
		o.CompactGarbageRatio = DefaultCompactGarbageRatio
	}
	if o.FS == nil {
		o.FS = vfs.OS()
	}
	// A negative AllocateAhead stays negative (the writer reads it as 0):
	// resolved to 0, a second normalization, as the Manager's Open makes,
	// would turn it into the default.
	if o.AllocateAhead == 0 {
		o.AllocateAhead = DefaultAllocateAhead
	}
	if o.FileMode&^os.ModePerm != 0 {
		return o, &OptionsError{Field: "FileMode", Value: o.FileMode.String()}
	}
	if o.FileMode == 0 {
		o.FileMode = DefaultFileMode
	}
	return o, nil
}
