//go:build linux

package vfs_test

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/xpwc/xpwc/impl/vfs"
)

// faultsOfSweep counts the minor page faults this thread takes reading one
// byte per page of b (all zero: the sum is checked so the reads stay).
func faultsOfSweep(t *testing.T, b []byte, ps int) int64 {
	t.Helper()
	var before, after unix.Rusage
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &before))
	var sum byte
	for i := 0; i < len(b); i += ps {
		sum += b[i]
	}
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &after))
	require.Zero(t, sum)
	return after.Minflt - before.Minflt
}

// Populate enters a mapping's pages into the page tables: a read of the
// populated range takes no page fault, where the same read of a fresh
// mapping of the same cached file takes one per fault-around block
// (the cache's prefault goroutine rests on this).
func TestOSMappingPopulate(t *testing.T) {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	fsys := vfs.OS()
	ps := fsys.PageSize()
	const size = 8 << 20
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, make([]byte, size), 0o600)) // in the page cache now
	f, err := fsys.OpenFile(p, os.O_RDONLY, 0)
	require.NoError(t, err)
	defer f.Close()

	fresh, err := f.Map(0, size, vfs.ProtRead)
	require.NoError(t, err)
	defer fresh.Close()
	unpopulated := faultsOfSweep(t, fresh.Bytes(), ps)

	m, err := f.Map(0, size, vfs.ProtRead)
	require.NoError(t, err)
	defer m.Close()
	pm, ok := m.(vfs.Populater)
	require.True(t, ok, "the OS mapping implements Populater on Linux")
	err = pm.Populate(0, size)
	if err != nil {
		require.ErrorIs(t, err, vfs.ErrNotSupported)
		t.Skip("kernel without MADV_POPULATE_READ")
	}
	populated := faultsOfSweep(t, m.Bytes(), ps)
	require.GreaterOrEqual(t, unpopulated, int64(size/ps/64), "a fresh mapping faults (at most 64 pages per fault around)")
	require.LessOrEqual(t, populated, int64(2), "after Populate, %d faults (fresh mapping: %d)", populated, unpopulated)

	// Ranges are checked; a closed mapping is an error, not a fault.
	require.Error(t, pm.Populate(0, size+ps))
	require.Error(t, pm.Populate(-ps, ps))
	require.NoError(t, pm.Populate(size, 0))
	require.NoError(t, m.Close())
	require.Error(t, pm.Populate(0, ps))
}
