//go:build unix

package proctest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/cache/lincheck"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// TestLockedLoadPacksToHeap is the rule of docs/locking.md ("A busy lock")
// that the process test found broken: a shared lock busy at load (another
// process writing) means every reservation of this program goes to heap,
// also when the writer has released the lock by the time the program packs.
// Before the fix the first reservation took the free exclusive lock and
// packed into the file, so a launch reported as "locked" served and could
// write file data.
func TestLockedLoadPacksToHeap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.xpwc")
	// Another writer: a second open file description of the lock file
	// conflicts like another process's (docs/locking.md).
	holder, err := vfs.OS().OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, holder.Lock(vfs.LockExclusive, false))

	c, err := cache.Open(cache.Options{Path: path})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	require.NoError(t, c.InitializeForProgram("p"))
	require.Equal(t, spec.LoadLocked, c.Stats().Load)

	require.NoError(t, holder.Close()) // the writer is done

	_, hit := c.LookUp(lincheck.Key(0, 0))
	require.False(t, hit)
	buf, err := c.ReserveSpace(lincheck.Size(0))
	require.NoError(t, err)
	lincheck.Pack(buf, 0, 0)
	_, err = c.LookUpOrInsert(lincheck.Key(0, 0), buf)
	require.NoError(t, err)
	require.NoError(t, c.Finalize())

	s := c.Stats()
	require.Positive(t, s.HeapBytes[cache.HeapLockBusy], "a locked load must send this program's packing to heap")
	require.Zero(t, s.FileBytes)
	require.Zero(t, s.Commits)
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "a launch whose load was locked created the file")

	// The next program of the same cache tries the lock again.
	require.NoError(t, c.InitializeForProgram("q"))
	require.Equal(t, spec.LoadMissing, c.Stats().Load)
	buf, err = c.ReserveSpace(lincheck.Size(1))
	require.NoError(t, err)
	lincheck.Pack(buf, 1, 0)
	_, err = c.LookUpOrInsert(lincheck.Key(1, 0), buf)
	require.NoError(t, err)
	require.NoError(t, c.Finalize())
	require.Positive(t, c.Stats().FileBytes)
	require.Equal(t, uint64(1), c.Stats().Commits)
}
