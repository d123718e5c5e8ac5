package cache

import "github.com/xpwc/xpwc/spec"

// RepackReason says why a look-up missed and its weight was packed again.
type RepackReason string

const (
	RepackNew         RepackReason = "new"         // never packed into this cache
	RepackSeed        RepackReason = "seed"        // packed layout changed (kernel upgrade)
	RepackFingerprint RepackReason = "fingerprint" // packer behaviour changed
	RepackSource      RepackReason = "source"      // source weights changed under the same name
	RepackCorrupt     RepackReason = "corrupt"     // data failed its checksum (G1)
	RepackInvalidated RepackReason = "invalidated" // dropped by Invalidate
	RepackHeap        RepackReason = "heap"        // a heap fall-back packing a loaded program holds, missed by a launch that can write the file (G3)
)

// HeapReason says why packed bytes live on the heap instead of the file.
type HeapReason string

const (
	HeapNoPath       HeapReason = "no-path"       // not opted in (G6)
	HeapUnnamed      HeapReason = "unnamed"       // constant without a name: never persisted
	HeapLockBusy     HeapReason = "lock-busy"     // another process holds the lock
	HeapOpenFailed   HeapReason = "open-failed"   // missing or read-only directory, permissions
	HeapAllocFailed  HeapReason = "alloc-failed"  // fallocate failed (ENOSPC, EIO)
	HeapNotSupported HeapReason = "not-supported" // no fallocate or mmap on this platform/filesystem
	HeapMapFailed    HeapReason = "map-failed"    // mmap failed
	HeapWriteFailed  HeapReason = "write-failed"  // a previous commit of this launch failed, or the write of staged bytes
	HeapClosed       HeapReason = "closed"        // reserved after Close
	HeapNotRegular   HeapReason = "not-regular"   // the path is a FIFO, device, socket or directory
	HeapForeign      HeapReason = "foreign-file"  // the path holds a file that is not a cache file
	HeapReadOnly     HeapReason = "read-only"     // Options.ReadOnly, or the file may be read, not written (EROFS, EACCES, EPERM; error in FallbackErr)
)

// heapReasons is every HeapReason, in the order of their heapCodes.
func heapReasons() [13]HeapReason {
	return [...]HeapReason{"", HeapNoPath, HeapUnnamed, HeapLockBusy, HeapOpenFailed, HeapAllocFailed,
		HeapNotSupported, HeapMapFailed, HeapWriteFailed, HeapClosed, HeapNotRegular, HeapForeign, HeapReadOnly}
}

// heapCode is a HeapReason in one byte, as an entry records it: a warm
// launch allocates an entry a weight, and each new page is a page fault.
type heapCode uint8

func heapCodeOf(r HeapReason) heapCode {
	for i, h := range heapReasons() {
		if h == r {
			return heapCode(i)
		}
	}
	panic("cache: HeapReason " + string(r) + " missing from heapReasons")
}

func (c heapCode) reason() HeapReason { return heapReasons()[c] }

// Stats is a snapshot of a cache's counters and space accounting.
type Stats struct {
	// Format is the format the cache reads and writes: the one named in
	// Options, or the one found in the file when none was named.
	Format spec.Format
	// Hits and Misses count LookUp answers (look-ups of unnamed constants
	// are misses too).
	Hits, Misses uint64
	// LookUpsBeforeInit counts look-ups made before the first
	// InitializeForProgram: an API misuse (the file is not loaded yet, so
	// they miss); the reservation that follows fails with ErrNotInitialized.
	LookUpsBeforeInit uint64
	// Repacks counts inserted packings by the reason their look-up missed.
	Repacks map[RepackReason]uint64
	// HeapBytes is the packed bytes of live heap entries by reason.
	HeapBytes map[HeapReason]uint64
	// FileBytes is the packed bytes of live entries in the file mapping.
	FileBytes uint64
	// FileSize is the size of the cache file as of the last load or commit.
	FileSize int64
	// GarbageBytes is the part of FileSize a rewrite would not keep: stale
	// entries, dead index blocks, unused reservations and the padding after
	// them. PaddingBytes is the page-alignment padding of live entries,
	// which a rewrite keeps (G4).
	GarbageBytes, PaddingBytes int64
	// Generation is the commit generation of the file (v3; v2 counts this
	// cache's commits).
	Generation uint64
	// CarriedOver counts entries read from a file of the format the caller
	// did not name, to be written in the configured one without re-packing.
	// CarryDropped counts those a commit could not write: a v2 file stores
	// only an entry's concatenated name and seed, so an entry goes into a
	// v3 file only once a look-up gave its full key; the others are
	// dropped (and re-packed when next needed).
	CarriedOver, CarryDropped uint64
	// Load is the outcome of the last load; LoadErr its typed error.
	Load    spec.LoadOutcome
	LoadErr error
	// Commits and Compactions count successful commits and rewrites by this
	// cache; CommitErr is the error of the last failed commit, nil once a
	// later commit succeeds.
	Commits, Compactions uint64
	CommitErr            error
	// FallbackErr is the error behind the last fall back to heap.
	FallbackErr error
	// ReleaseErr is the first failure to close a file, give back the lock
	// or unmap a mapping (ending a write session, Close). It fails no call:
	// what was committed was synced before its commit point (G2, G8).
	ReleaseErr error
	// Verified counts entries whose data checksum was checked; Corrupt those
	// that failed it (G1).
	Verified, Corrupt uint64
	// VerifiedAhead counts, of Verified, the checks made by the prefault
	// goroutine ahead of the compute (not Options.DisableVerifyAhead).
	VerifiedAhead uint64
}
