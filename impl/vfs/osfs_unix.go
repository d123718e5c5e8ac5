//go:build unix

package vfs

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/xpwc/xpwc/internal/rawmem"
)

// openNonblock is O_NONBLOCK, which OpenFile adds to every open.
const openNonblock = unix.O_NONBLOCK

func (o *osFile) Map(off int64, length int, prot Prot) (Mapping, error) {
	if length <= 0 {
		return nil, fmt.Errorf("vfs: map %s: length %d: %w", o.f.Name(), length, unix.EINVAL)
	}
	var b []byte
	err := o.control(func(fd int) error {
		// Not unix.Mmap, which records every mapping in a map of its own
		// (under a lock) for unix.Munmap: its first entry is a new heap
		// page, a page fault in the fresh process of a warm launch.
		p, err := unix.MmapPtr(fd, off, nil, uintptr(length), unixProt(prot), unix.MAP_SHARED)
		if err == nil {
			b = rawmem.At(p, length)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("vfs: mmap %s [%d,+%d) %s: %w", o.f.Name(), off, length, prot, err)
	}
	return &osMapping{b: b, off: off}, nil
}

func (o *osFile) Lock(mode LockMode, wait bool) error {
	how := unix.LOCK_SH
	if mode == LockExclusive {
		how = unix.LOCK_EX
	}
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err := o.control(func(fd int) error { return unix.Flock(fd, how) })
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			// A signal (Go's preemption uses them) interrupted a waiting
			// flock; the lock was not taken, so ask again.
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return ErrWouldBlock
		default:
			return fmt.Errorf("vfs: flock %s %s: %w", o.f.Name(), mode, err)
		}
	}
}

func (o *osFile) Unlock() error {
	if err := o.control(func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) }); err != nil {
		return fmt.Errorf("vfs: unlock %s: %w", o.f.Name(), err)
	}
	return nil
}

// control runs fn on the descriptor while holding a reference to it, so a
// concurrent Close cannot recycle the number under fn (os.File.Fd offers no
// such guarantee, and switches the file to blocking mode).
func (o *osFile) control(fn func(fd int) error) error {
	rc, err := o.f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func unixProt(p Prot) int {
	if p == ProtReadWrite {
		return unix.PROT_READ | unix.PROT_WRITE
	}
	return unix.PROT_READ
}

type osMapping struct {
	b   []byte
	off int64
}

var _ Mapping = (*osMapping)(nil)

func (m *osMapping) Bytes() []byte { return m.b }
func (m *osMapping) Offset() int64 { return m.off }

func (m *osMapping) Sync() error {
	if m.b == nil {
		return errClosedMapping
	}
	// MS_SYNC, not MS_ASYNC: on Linux MS_ASYNC leaves the pages dirty, and
	// only written-back pages stop counting as Private_Dirty (G5).
	if err := unix.Msync(m.b, unix.MS_SYNC); err != nil {
		return fmt.Errorf("vfs: msync: %w", err)
	}
	return nil
}

func (m *osMapping) Protect(prot Prot) error {
	if m.b == nil {
		return errClosedMapping
	}
	if err := unix.Mprotect(m.b, unixProt(prot)); err != nil {
		return fmt.Errorf("vfs: mprotect %s: %w", prot, err)
	}
	return nil
}

func (m *osMapping) Close() error {
	if m.b == nil {
		return nil
	}
	b := m.b
	m.b = nil
	if err := unix.MunmapPtr(rawmem.Pointer(b), uintptr(len(b))); err != nil {
		return fmt.Errorf("vfs: munmap: %w", err)
	}
	return nil
}
