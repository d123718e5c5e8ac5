package crashfs

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/vfs"
)

// A flock belongs to the open file description, and a mapping keeps the
// description alive: closing the File does not release its lock while a
// mapping made from it is open (Linux; what ExecuTorch's loader relies on,
// and what the cache's data-file lock relies on, docs/locking.md).
func TestMappingKeepsLock(t *testing.T) {
	f := newFS(t)
	a := create(t, f, "/c/x", make([]byte, 4096))
	require.NoError(t, a.Lock(vfs.LockShared, false))
	m, err := a.Map(0, 4096, vfs.ProtRead)
	require.NoError(t, err)
	require.NoError(t, a.Close())

	b, err := f.OpenFile("/c/x", os.O_RDWR, 0)
	require.NoError(t, err)
	require.ErrorIs(t, b.Lock(vfs.LockExclusive, false), vfs.ErrWouldBlock, "the mapping still holds the shared lock")
	require.NoError(t, b.Lock(vfs.LockShared, false), "shared locks do not conflict")
	require.NoError(t, b.Unlock())
	require.NoError(t, m.Close())
	require.NoError(t, b.Lock(vfs.LockExclusive, false), "released with the last mapping")
	require.NoError(t, b.Close())
}

// Stat reports a regular file with the mode given at creation or by Chmod,
// and crashes keep the mode.
func TestModeKept(t *testing.T) {
	f := newFS(t)
	file, err := f.OpenFile("/c/m", os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	fi, err := f.Stat("/c/m")
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular())
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.NoError(t, f.Chmod("/c/m", 0o640))
	require.NoError(t, file.Sync())
	require.NoError(t, f.SyncDir("/c"))
	after := f.ProcessCrash()
	fi, err = after.Stat("/c/m")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	fi, err = after.PowerLoss(1).Stat("/c/m")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}
