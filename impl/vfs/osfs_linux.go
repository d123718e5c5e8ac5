//go:build linux

package vfs

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
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
