package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/xpwc/xpwc/impl/vfs"
)

// unreadableError is input a command cannot read at all (missing, not a
// regular file, no permission): bad input, exit 2, unlike a file read and
// found wrong (exit 1).
type unreadableError struct{ error }

func (e unreadableError) Unwrap() error { return e.error }

// exitFor is the exit code of a command's error: exitUsage for input it
// could not read, exitProblem otherwise.
func exitFor(err error) int {
	var u unreadableError
	if errors.As(err, &u) {
		return exitUsage
	}
	return exitProblem
}

// openRegular opens a cache file for reading without blocking on whatever
// sits at the path: anything but a regular file (a FIFO, a device, a
// socket, a directory) is refused with its kind named, and the open itself
// is non-blocking (vfs.OS) for a FIFO that appears in between. Links are
// followed.
func openRegular(path string) (vfs.File, int64, error) {
	f, size, err := openRegularFile(path)
	if err != nil {
		return nil, 0, unreadableError{err}
	}
	return f, size, nil
}

func openRegularFile(path string) (vfs.File, int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: not a regular file (%s)", path, vfs.FileKind(fi.Mode()))
	}
	f, err := vfs.OS().OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, 0, err
	}
	size, err := f.Size()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, size, nil
}
