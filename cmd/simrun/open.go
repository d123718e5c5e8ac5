package main

import (
	"fmt"
	"os"

	"github.com/xpwc/xpwc/impl/vfs"
)

// openRegular opens a cache file for reading without blocking on whatever
// sits at the path: anything but a regular file (a FIFO, a device, a
// socket, a directory) is refused with its kind named, and the open itself
// is non-blocking (vfs.OS) for a FIFO that appears in between. Links are
// followed.
func openRegular(path string) (vfs.File, int64, error) {
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
