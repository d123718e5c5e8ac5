//go:build !linux

package vfs

import "path/filepath"

// PopulateHeap does nothing here: MADV_POPULATE_WRITE is Linux's.
func PopulateHeap(addr uintptr, n int) {}

// evalDir is filepath.EvalSymlinks: the readlink fast path is Linux's.
func evalDir(dir string) (string, error) { return filepath.EvalSymlinks(dir) }

// notLink is false: Resolve asks os.Readlink.
func notLink(string) bool { return false }
