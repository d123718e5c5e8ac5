//go:build unix && !linux

package vfs

import "fmt"

// Allocate reports ErrNotSupported where there is no fallocate: extending
// the file with ftruncate would leave a sparse range, and a store into a
// sparse range on a full disk is a SIGBUS. The cache packs to heap instead.
func (o *osFile) Allocate(off, length int64) error {
	return fmt.Errorf("vfs: allocate %s: %w", o.f.Name(), ErrNotSupported)
}

// SyncData falls back to fsync, which flushes at least as much.
func (o *osFile) SyncData() error { return o.f.Sync() }
