package cache

import (
	"errors"
	"fmt"
)

// Misuse of the API. The file's failures never surface as these: they become
// heap packing with a reason in Stats (G8).
var (
	// ErrClosed is returned by every operation after Close.
	ErrClosed = errors.New("cache: closed")
	// ErrInvalidOptions is matched by every *OptionsError.
	ErrInvalidOptions = errors.New("cache: invalid options")
	// ErrStaleHandle is returned by Bytes for a handle whose entry was
	// released (its program deleted and the entry dropped from the index) or
	// that this Cache never issued. A handle is never reused, so a stale one
	// cannot reach another entry's bytes.
	ErrStaleHandle = errors.New("cache: stale or unknown handle")
	// ErrCorruptData is returned by Bytes under VerifyOnCompute when the
	// entry's data fails its checksum: the bytes are never handed out, the
	// entry has left the index, and the caller re-packs (G1).
	ErrCorruptData = errors.New("cache: packed data failed its checksum")
	// ErrNotFound is returned by LookUpOrInsert with nil packed bytes when
	// the key is not present (the nil form is only valid after a hit,
	// ExecuTorch #18295).
	ErrNotFound = errors.New("cache: key not found")
	// ErrNotReserved is returned by LookUpOrInsert when packed does not
	// start at a buffer ReserveSpace returned, or at one whose reservation
	// has ended (Finalize drops reservations never inserted).
	ErrNotReserved = errors.New("cache: packed bytes were not reserved by this cache")
	// ErrAlreadyInserted is returned by LookUpOrInsert when packed starts at
	// a reservation that was already inserted: the second insert of one
	// buffer. The bytes stay where the first insert put them.
	ErrAlreadyInserted = errors.New("cache: packed bytes were already inserted")
	// ErrInvalidSize is returned by ReserveSpace for a size <= 0, and by
	// LookUpOrInsert for packed bytes longer than their reservation.
	ErrInvalidSize = errors.New("cache: invalid size")
	// ErrInvalidKey is returned by LookUpOrInsert for a key whose names are
	// too long or contain the name separator.
	ErrInvalidKey = errors.New("cache: invalid key")
	// ErrNotInitialized is returned by ReserveSpace and LookUpOrInsert
	// before the first InitializeForProgram: the file is loaded there, so
	// before it every look-up misses and a packing could replace what the
	// file holds. LookUp has no error result (XNNPACK's look_up has none
	// either: a miss is SIZE_MAX), so a look-up before initialization is
	// counted in Stats.LookUpsBeforeInit and the reservation every miss
	// leads to fails with this error.
	ErrNotInitialized = errors.New("cache: no program was initialized on this cache yet")
	// ErrNoProgram is returned by Finalize when no program is initialized.
	ErrNoProgram = errors.New("cache: no program initialized")
	// ErrProgramActive is returned by InitializeForProgram while another
	// program is initialized and not finalized: like ExecuTorch's cache
	// mutex, the runtime serializes program creation on one cache.
	ErrProgramActive = errors.New("cache: another program is being initialized")
	// ErrUnknownProgram is returned by DeleteProgram for a program that was
	// never initialized or is already deleted.
	ErrUnknownProgram = errors.New("cache: unknown program")
	// ErrProgramLive is returned by InitializeForProgram for a program
	// initialized before and not deleted since: its packing is done (or
	// under way), and a second one would pack it again under the same
	// name. DeleteProgram ends it (the backend's destroy).
	ErrProgramLive = errors.New("cache: program already initialized")
	// ErrUncommitted is returned by Close when packed entries written to
	// the file were never committed (no Finalize or Save after their
	// insert): they are lost, and the next launch packs them again.
	ErrUncommitted = errors.New("cache: packed entries were never committed")
	// ErrNoMiss is matched by the *PathError ReserveSpace returns after
	// Finalize when no look-up missed since the last reservation: a
	// re-pack, and a packer thread that Finalize overtook, reserve after
	// their own miss, so such a reservation packs nothing the program
	// asked for. During initialization a reservation is never refused.
	ErrNoMiss = errors.New("cache: ReserveSpace after Finalize with no look-up that missed")
	// ErrOptionsMismatch is returned by Manager.Get when a live cache of the
	// path was opened with different options.
	ErrOptionsMismatch = errors.New("cache: options differ from the live cache of this path")
)

// Failures of the file, recorded in Stats (never returned by provider calls).
var (
	// ErrLockBusy is recorded when another open file description holds the
	// lock file, after waiting Options.LockWait.
	ErrLockBusy = errors.New("cache: lock file is busy")
	// ErrNotRegular is recorded when the cache path is not a regular file
	// (a FIFO, a device, a socket, a directory): nothing is read from it
	// or written to it.
	ErrNotRegular = errors.New("cache: not a regular file")
	// ErrForeignFile is recorded when the cache path holds a file that is
	// neither format's (spec.Recognize): it is left untouched unless
	// Options.ReplaceForeign. It does not match spec.ErrCorrupt, which
	// means a damaged cache file, replaced at the next commit.
	ErrForeignFile = errors.New("cache: not a cache file")
	// ErrReadOnly is returned by a write the cache refuses because it is
	// read-only (Options.ReadOnly, a read-only file system, or a file this
	// process may read and not write); Stats.FallbackErr wraps it around
	// the system's error.
	ErrReadOnly = errors.New("cache: read-only")
)

// ErrNoDirectory is matched by the *PathError recorded in Stats.LoadErr
// when the cache file's directory does not exist (or is not a directory):
// the launch packs to heap with reason open-failed (G8).
var ErrNoDirectory = errors.New("cache: no such directory")

// PathError is a failure of the cache path itself, recorded in Stats: Path
// is the cache file the caller configured, never the lock file beside it.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return fmt.Sprintf("cache: %s: %v", e.Path, e.Err) }

func (e *PathError) Unwrap() error { return e.Err }

// OptionsError reports an invalid option.
type OptionsError struct {
	Field, Value string
}

func (e *OptionsError) Error() string {
	return fmt.Sprintf("cache: invalid option %s = %s", e.Field, e.Value)
}

func (e *OptionsError) Unwrap() error { return ErrInvalidOptions }
