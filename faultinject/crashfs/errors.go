package crashfs

import (
	"errors"
	"fmt"
)

// ErrCrashed is returned by every call on an FS, File or Mapping after the
// FS crashed (ProcessCrash, PowerLoss) or after the crash point set by
// SetCrashAfter was reached: the process that held them is gone.
var ErrCrashed = errors.New("crashfs: file system crashed")

// ErrBusFault is the cause of the FaultError raised when a mapping is used
// whose range is no longer backed by the file (it was truncated below the
// mapping). On Linux this is a SIGBUS; a Go program sees it as a panic only
// under debug.SetPanicOnFault, and dies otherwise.
var ErrBusFault = errors.New("crashfs: SIGBUS: mapped range beyond end of file")

// ErrProtectionFault is the cause of the FaultError raised when a store
// through a read-only mapping is detected. On Linux this is a SIGSEGV at the
// store; here it is detected when stores are next taken (see the package
// comment).
var ErrProtectionFault = errors.New("crashfs: SIGSEGV: store into a read-only mapping")

// FaultError is the value crashfs panics with when a program touches memory
// the OS would fault on. It implements runtime.Error and Addr like the
// error debug.SetPanicOnFault produces, so code that recovers real memory
// faults handles simulated ones the same way. Addr is the file offset of the
// faulting byte, not a memory address.
type FaultError struct {
	Err  error
	Path string
	Off  int64
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("%v (%s at offset %d)", e.Err, e.Path, e.Off)
}

// Unwrap returns ErrBusFault or ErrProtectionFault.
func (e *FaultError) Unwrap() error { return e.Err }

// RuntimeError marks the error as a runtime fault (runtime.Error).
func (e *FaultError) RuntimeError() {}

// Addr reports where the fault happened (a file offset).
func (e *FaultError) Addr() uintptr { return uintptr(e.Off) }
