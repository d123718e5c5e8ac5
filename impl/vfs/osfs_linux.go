//go:build linux

package vfs

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/xpwc/xpwc/internal/rawmem"
)

func (o *osFile) Allocate(off, length int64) error {
	// Mode 0 extends the file size and reserves the blocks, so a later store
	// through a mapping of the range cannot hit ENOSPC as a SIGBUS.
	for {
		err := o.control(func(fd int) error { return unix.Fallocate(fd, 0, off, length) })
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EOPNOTSUPP):
			return fmt.Errorf("vfs: fallocate %s: %w", o.f.Name(), ErrNotSupported)
		default:
			return fmt.Errorf("vfs: fallocate %s [%d,+%d): %w", o.f.Name(), off, length, err)
		}
	}
}

func (o *osFile) SyncData() error {
	if err := o.control(unix.Fdatasync); err != nil {
		return fmt.Errorf("vfs: fdatasync %s: %w", o.f.Name(), err)
	}
	return nil
}

var _ Populater = (*osMapping)(nil)

func (m *osMapping) Populate(off, length int) error {
	if m.b == nil {
		return errClosedMapping
	}
	if off < 0 || length < 0 || off > len(m.b) || length > len(m.b)-off {
		return fmt.Errorf("vfs: populate [%d,+%d) of a %d-byte mapping: %w", off, length, len(m.b), unix.EINVAL)
	}
	if length == 0 {
		return nil
	}
	// MADV_POPULATE_READ (Linux 5.14) faults the range in as reads would,
	// without the trap per fault-around block that the reads take.
	for {
		err := unix.Madvise(m.b[off:off+length], unix.MADV_POPULATE_READ)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EINVAL):
			return fmt.Errorf("vfs: madvise populate: %w", ErrNotSupported)
		default:
			return fmt.Errorf("vfs: madvise populate [%d,+%d): %w", off, length, err)
		}
	}
}

var _ HugeFiller = (*osFile)(nil)

func (o *osFile) FillHuge(off, length int64) error {
	if off < 0 || length <= 0 || off%HugePageSize != 0 || length%HugePageSize != 0 {
		return fmt.Errorf("vfs: fill huge %s [%d,+%d): %w", o.f.Name(), off, length, unix.EINVAL)
	}
	// A read fault in a MADV_HUGEPAGE mapping reads the file around it in
	// PMD-sized folios (the page cache's read-around for huge mappings);
	// over an allocated but unwritten range that is zeros, no disk I/O.
	// Later writes (pwrite or stores) go into those folios, where a write
	// into an uncached range gets a folio no larger than the write.
	m, err := o.Map(off, int(length), ProtRead)
	if err != nil {
		return err
	}
	b := m.Bytes()
	err = unix.Madvise(b, unix.MADV_HUGEPAGE)
	if err == nil {
		err = m.(*osMapping).Populate(0, len(b))
	}
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("vfs: fill huge %s: %w", o.f.Name(), ErrNotSupported)
	default:
		return fmt.Errorf("vfs: fill huge %s [%d,+%d): %w", o.f.Name(), off, length, err)
	}
}

// PopulateHeap enters the pages holding [addr, addr+n), heap memory of
// this process that is about to be written, into its page tables with one
// call (MADV_POPULATE_WRITE, Linux 5.14), zero-filled as first writes
// would leave them; pages already present keep their bytes. In a fresh
// process each new heap page is otherwise a page fault of its own, and on
// a guest whose hypervisor shadows page tables a fault costs several
// microseconds. A range of one page is left to its fault. Best effort: a
// kernel that refuses costs only that speed. The caller keeps the memory
// alive across the call.
func PopulateHeap(addr uintptr, n int) {
	page := uintptr(unix.Getpagesize())
	lo := addr &^ (page - 1)
	hi := (addr + uintptr(n) + page - 1) &^ (page - 1)
	if n <= 0 || hi-lo < 2*page {
		return
	}
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_POPULATE_WRITE)
}

// evalDir is filepath.EvalSymlinks(dir) for the directory of a cache path
// (dir clean, as filepath.Dir gives it), with a fast path for the common
// case: a path none of whose prefixes is a symbolic link, and which has
// no "..", resolves to itself. That is asked with one readlink per prefix,
// on a copy of the path on the stack, where EvalSymlinks takes an lstat and
// builds a FileInfo and a new string for each. Anything else (a link, a
// "..", a missing directory, a long path) goes to EvalSymlinks, whose
// answer (or error) stands.
func evalDir(dir string) (string, error) {
	if len(dir) == 0 || filepath.Clean(dir) != dir {
		return filepath.EvalSymlinks(dir)
	}
	var p pathBuf
	n, ok := p.set(dir)
	if !ok {
		return filepath.EvalSymlinks(dir)
	}
	// A prefix ends before each separator after the first byte, and at
	// the end of the path.
	for i := 1; i <= n; i++ {
		if i < n && p[i] != '/' {
			continue
		}
		start := i - 1
		for start > 0 && p[start-1] != '/' {
			start--
		}
		if elem := string(p[start:i]); elem == ".." || elem == "." {
			// "." alone (the working directory) has nothing to resolve;
			// EvalSymlinks says so itself.
			return filepath.EvalSymlinks(dir)
		}
		saved := p[i]
		p[i] = 0
		errno := p.readlink()
		p[i] = saved
		if errno != unix.EINVAL {
			// A link (no error), or an error EvalSymlinks reports.
			return filepath.EvalSymlinks(dir)
		}
	}
	return dir, nil
}

// notLink reports whether readlink says name is not a symbolic link
// (EINVAL), asked without os.Readlink's buffer, error value and
// errors.Is: in a fresh process each of them is code and runtime tables
// touched for the first time, 10 us of a warm load's Open. false: a link,
// an error, or a path too long to ask this way.
func notLink(name string) bool {
	var p pathBuf
	_, ok := p.set(name)
	return ok && p.readlink() == unix.EINVAL
}

// pathBuf is a NUL-terminated path on the stack.
type pathBuf [512]byte

// set copies name in and reports its length, or false if it does not fit
// or holds a NUL.
func (p *pathBuf) set(name string) (int, bool) {
	if len(name) == 0 || len(name) >= len(p) {
		return 0, false
	}
	n := copy(p[:], name)
	p[n] = 0
	for _, c := range p[:n] {
		if c == 0 {
			return 0, false
		}
	}
	return n, true
}

// readlink asks readlinkat for the path up to the first NUL, into a
// one-byte buffer: only whether it is a link matters.
func (p *pathBuf) readlink() unix.Errno {
	var out [1]byte
	cwd := unix.AT_FDCWD
	// The pointers are converted in the call's arguments, which keeps
	// both buffers alive and in place until it returns.
	_, _, errno := unix.Syscall6(unix.SYS_READLINKAT, uintptr(cwd),
		uintptr(rawmem.Pointer(p[:])), uintptr(rawmem.Pointer(out[:])), uintptr(len(out)), 0, 0)
	return errno
}
