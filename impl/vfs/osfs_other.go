//go:build !unix

package vfs

import "fmt"

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
