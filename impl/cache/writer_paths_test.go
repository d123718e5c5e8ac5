package cache_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// An fallocate that fails with ENOSPC may still have extended the live
// file. A v2 file is found only through the footer at its very end, so the
// next index must go after everything the file now holds: a Save of the
// entries that did fit leaves, there and then (the program goes on), a
// file every reader accepts.
func TestV2FailedAllocateThatExtendedTheFile(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), Format: spec.FormatV2, CompactGarbageRatio: -1}
	ks := keys(3, 1)
	process(t, opts, ks[:1])

	calls := 0
	fsys := &hookFS{FS: vfs.OS(), allocate: func(name string, off, length int64) error {
		calls++
		if calls < 2 {
			return nil
		}
		// The second region: the file grows by half of it, then the disk
		// is full.
		require.NoError(t, os.Truncate(name, off+length/2))
		return syscall.ENOSPC
	}}
	c := open(t, cache.Options{Path: opts.Path, Format: opts.Format, CompactGarbageRatio: -1, FS: fsys})
	require.NoError(t, c.InitializeForProgram("P"))
	for _, k := range ks {
		pack(t, c, k)
	}
	require.NoError(t, c.Save())
	require.Equal(t, 2, calls)
	s := c.Stats()
	require.ErrorIs(t, s.FallbackErr, syscall.ENOSPC)
	require.Positive(t, s.HeapBytes[cache.HeapAllocFailed])
	require.Equal(t, uint64(1), s.Commits)
	f, n := entriesOf(t, opts.Path)
	require.Equal(t, spec.FormatV2, f)
	require.Equal(t, 2, n)
	require.NoError(t, c.Finalize())

	s = process(t, opts, ks)
	require.Equal(t, spec.LoadOK, s.Load)
	require.Equal(t, uint64(2), s.Hits)
}

// A new file is cut back to what it holds before its index is written (one
// region: the file was allocated twice its end ahead); if
// that truncate fails the commit fails (nothing is published, the
// temporary file is removed) instead of publishing a file whose end lies
// past its index.
func TestTrimFailureFailsTheCommit(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), Format: f}
			inj := &opFails{on: true, match: func(op errorfs.Op) bool { return op.Kind == errorfs.OpTruncate }}
			s := process(t, cache.Options{Path: opts.Path, Format: f, FS: errorfs.Wrap(vfs.OS(), inj)}, keys(1, 1))
			require.ErrorIs(t, s.CommitErr, syscall.EIO)
			require.Zero(t, s.Commits)
			_, err := os.Stat(opts.Path)
			require.ErrorIs(t, err, os.ErrNotExist)
			names, err := os.ReadDir(filepath.Dir(opts.Path))
			require.NoError(t, err)
			for _, n := range names {
				require.NotContains(t, n.Name(), ".tmp-")
			}
		})
	}
}

// A file system that turns read-only between the load and the first
// write, where the lock file has gone meanwhile (so it can be neither
// created nor opened), makes the cache read-only: the program packs to
// heap with reason read-only, and nothing is written.
func TestReadOnlyAtFirstWrite(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(2, 1)
	process(t, opts, ks[:1])
	size := fileInfo(t, opts.Path).Size()

	ro := false
	fsys := &hookFS{FS: vfs.OS(), open: func(name string, flag int) error {
		if ro && flag&(os.O_CREATE|os.O_WRONLY|os.O_RDWR) != 0 {
			return &os.PathError{Op: "open", Path: name, Err: syscall.EROFS}
		}
		return nil
	}}
	c := open(t, cache.Options{Path: opts.Path, FS: fsys})
	require.NoError(t, c.InitializeForProgram("P"))
	require.NoError(t, os.Remove(opts.Path+".lock"))
	ro = true
	_, hit := pack(t, c, ks[0])
	require.True(t, hit)
	_, hit = pack(t, c, ks[1])
	require.False(t, hit)
	require.NoError(t, c.Finalize())
	s := c.Stats()
	require.ErrorIs(t, s.FallbackErr, cache.ErrReadOnly)
	require.ErrorIs(t, s.FallbackErr, syscall.EROFS)
	require.Positive(t, s.HeapBytes[cache.HeapReadOnly])
	require.Zero(t, s.Commits)
	require.Equal(t, size, fileInfo(t, opts.Path).Size())
}

// A commit that fails ends the write: the temporary file of a new cache
// file is removed, and the entries packed into it are never named by a
// later commit (their bytes were in the removed file, not in the one the
// next write creates). The next launch re-packs them as new, with nothing
// corrupt.
func TestFailedCommitEntriesNeverCommittedLater(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	x, y := key("x", 1), key("y", 1)
	inj := &opFails{match: func(op errorfs.Op) bool { return op.Kind == errorfs.OpRename }}
	c := open(t, cache.Options{Path: opts.Path, FS: errorfs.Wrap(vfs.OS(), inj)})
	require.NoError(t, c.InitializeForProgram("P1"))
	pack(t, c, x)
	inj.on = true
	require.NoError(t, c.Finalize())
	inj.on = false
	require.ErrorIs(t, c.Stats().CommitErr, syscall.EIO)
	names, err := os.ReadDir(filepath.Dir(opts.Path))
	require.NoError(t, err)
	for _, n := range names {
		require.NotContains(t, n.Name(), ".tmp-", "the failed commit's temporary file is removed")
	}

	launch(t, c, "P2", []spec.Key{y})
	require.Equal(t, uint64(1), c.Stats().Commits)
	_, n := entriesOf(t, opts.Path)
	require.Equal(t, 1, n, "only y")

	s := process(t, opts, []spec.Key{x, y})
	require.Equal(t, uint64(1), s.Hits)
	require.Equal(t, uint64(1), s.Repacks[cache.RepackNew])
	require.Zero(t, s.Corrupt)
}
