package errorfs

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/xpwc/xpwc/impl/vfs"
)

// ErrInjected matches (errors.Is) every error this package injects, so a test
// can tell an injected failure from a real one, and a cache's recorded
// fallback reason can be traced back to the injector (G8).
var ErrInjected = errors.New("errorfs: injected error")

// ErrSyntax is returned by Parse for text that is not a valid injector.
var ErrSyntax = errors.New("errorfs: syntax error")

// Error is an injected error. It matches ErrInjected and unwraps to the
// error the real call would have returned (a syscall.Errno or a vfs
// sentinel), so callers' errors.Is(err, syscall.ENOSPC) and
// errors.Is(err, fs.ErrNotExist) work exactly as with the OS.
type Error struct {
	Op  Op
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %v (injected)", e.Op, e.Err) }

// Unwrap returns the simulated cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInjected) hold.
func (e *Error) Is(target error) bool { return target == ErrInjected }

// Errno is an Injector that always fails with one error. The named values
// below cover the failures of guarantee G8.
type Errno struct {
	name string
	err  error
}

var (
	// ENOSPC: disk full (Allocate, WriteAt, Sync on some filesystems).
	ENOSPC = &Errno{"enospc", syscall.ENOSPC}
	// EIO: a device error, typically surfacing at Sync.
	EIO = &Errno{"eio", syscall.EIO}
	// EINTR: an interrupted call. The seam does not retry; a caller that
	// should retry on EINTR is tested with this.
	EINTR = &Errno{"eintr", syscall.EINTR}
	// ENOMEM: mmap failure (address space exhausted, vm.max_map_count).
	ENOMEM = &Errno{"enomem", syscall.ENOMEM}
	// EROFS: the cache directory is on a read-only filesystem.
	EROFS = &Errno{"erofs", syscall.EROFS}
	// EACCES: the cache directory is not writable (errors.Is fs.ErrPermission).
	EACCES = &Errno{"eacces", syscall.EACCES}
	// NotExist: the cache directory or file is missing (errors.Is
	// fs.ErrNotExist, since syscall.ENOENT matches it).
	NotExist = &Errno{"notexist", syscall.ENOENT}
	// WouldBlock: another open file description holds the lock.
	WouldBlock = &Errno{"wouldblock", vfs.ErrWouldBlock}
)

var errnos = []*Errno{ENOSPC, EIO, EINTR, ENOMEM, EROFS, EACCES, NotExist, WouldBlock}

// MaybeError implements Injector.
func (e *Errno) MaybeError(op Op) error { return &Error{Op: op, Err: e.err} }

func (e *Errno) String() string { return e.name }

// Cause is the simulated error the injected *Error unwraps to.
func (e *Errno) Cause() error { return e.err }

// If returns an injector that fails with e whenever p holds.
func (e *Errno) If(p Predicate) Injector { return If(p, e) }

// ShortWriteError is injected by ShortWrite. The FS wrapper recognises it
// on a WriteAt: it performs the first N bytes of the write for real and
// then returns the error, so the file holds a prefix of what was asked —
// the partial write io.WriterAt allows. On any other op it is a plain error.
type ShortWriteError struct {
	Injected *Error
	N        int64
}

func (e *ShortWriteError) Error() string {
	return fmt.Sprintf("short write of %d bytes: %v", e.N, e.Injected)
}

// Unwrap returns the *Error so both ErrInjected and its cause match.
func (e *ShortWriteError) Unwrap() error { return e.Injected }

// ShortWrite injects a write that stores only the first n bytes (fewer if the
// write is shorter; never all of them) and then fails with cause.
type ShortWrite struct {
	N     int64
	Cause *Errno
}

// MaybeError implements Injector.
func (s *ShortWrite) MaybeError(op Op) error {
	return &ShortWriteError{Injected: &Error{Op: op, Err: s.Cause.err}, N: s.N}
}

func (s *ShortWrite) String() string { return fmt.Sprintf("(short %d %s)", s.N, s.Cause) }

// LieError is injected by Lie. The FS wrapper recognises it on a flush
// (sync, syncdata, syncdir, msync): the call reports success and never
// reaches the filesystem, so what it should have made durable stays in the
// page cache only. A disk or a file system that acknowledges a flush it
// did not make does this; so does a commit that skips a sync. On any other
// op it is a plain error (EIO).
type LieError struct{ Injected *Error }

func (e *LieError) Error() string { return fmt.Sprintf("flush not made: %v", e.Injected) }

// Unwrap returns the *Error so both ErrInjected and its cause match.
func (e *LieError) Unwrap() error { return e.Injected }

type lie struct{}

// Lie injects a flush that reports success without flushing (see
// LieError). Under crashfs a power loss then drops what the flush should
// have kept, which is how a test shows that a check catches a commit that
// is not durable.
var Lie Injector = lie{}

func (lie) MaybeError(op Op) error { return &LieError{Injected: &Error{Op: op, Err: syscall.EIO}} }
func (lie) String() string         { return "lie" }

// flushed runs a flush unless err is a LieError, which it turns into
// success; any other error is returned as it is.
func flushed(err error, flush func() error) error {
	var l *LieError
	if errors.As(err, &l) {
		return nil
	}
	if err != nil {
		return err
	}
	return flush()
}
