//go:build !unix

package vfs

import (
	"fmt"
	"path/filepath"
)

// A platform without mmap and flock gets a heap-only build: every call that
// would need them reports ErrNotSupported, which the cache turns into heap
// packing with a recorded reason (G8).

// openNonblock is 0 where there is no O_NONBLOCK to add.
const openNonblock = 0

func (o *osFile) Map(off int64, length int, prot Prot) (Mapping, error) {
	return nil, fmt.Errorf("vfs: map %s: %w", o.f.Name(), ErrNotSupported)
}

func (o *osFile) Allocate(off, length int64) error {
	return fmt.Errorf("vfs: allocate %s: %w", o.f.Name(), ErrNotSupported)
}

func (o *osFile) Lock(mode LockMode, wait bool) error {
	return fmt.Errorf("vfs: lock %s: %w", o.f.Name(), ErrNotSupported)
}

func (o *osFile) Unlock() error { return nil }

func (o *osFile) SyncData() error { return o.f.Sync() }

// PopulateHeap does nothing here: MADV_POPULATE_WRITE is Linux's.
func PopulateHeap(addr uintptr, n int) {}

// evalDir is filepath.EvalSymlinks: the readlink fast path is Linux's.
func evalDir(dir string) (string, error) { return filepath.EvalSymlinks(dir) }

// notLink is false: Resolve asks os.Readlink.
func notLink(string) bool { return false }
