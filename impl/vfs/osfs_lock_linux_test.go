//go:build linux

package vfs_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/vfs"
)

// The kernel facts the cache's data-file lock rests on (docs/locking.md):
// a flock outlives Close while a mapping made from the descriptor is open,
// shared locks coexist, and an exclusive request fails until the last
// mapping is gone (ExecuTorch's loader keeps its LOCK_SH this way).
func TestOSMappingKeepsLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, make([]byte, 4096), 0o600))
	fsys := vfs.OS()
	a, err := fsys.OpenFile(p, os.O_RDONLY, 0)
	require.NoError(t, err)
	require.NoError(t, a.Lock(vfs.LockShared, false))
	m, err := a.Map(0, 4096, vfs.ProtRead)
	require.NoError(t, err)
	require.NoError(t, a.Close())

	b, err := fsys.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	defer b.Close()
	require.ErrorIs(t, b.Lock(vfs.LockExclusive, false), vfs.ErrWouldBlock)
	require.NoError(t, m.Close())
	require.NoError(t, b.Lock(vfs.LockExclusive, false))
}

// File.Stat (fstat) describes what was opened, not what a path names: a
// FIFO opened without a writer (O_NONBLOCK) reports itself as one.
func TestOSStatOfOpenFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	f, err := vfs.OS().OpenFile(p, os.O_RDONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, os.ModeNamedPipe, fi.Mode().Type())
}
