package cache_test

import (
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// The manager tests follow ExecuTorch's test_xnn_weights_cache_manager.cpp
// (names in comments).

func TestManagerOneInstancePerPath(t *testing.T) {
	m := cache.NewManager(vfs.OS())
	dir := t.TempDir()
	a, relA, err := m.Get(cache.Options{Path: filepath.Join(dir, "a")})
	require.NoError(t, err)
	// SamePathReturnsSameInstance (a path spelled differently is the same).
	a2, relA2, err := m.Get(cache.Options{Path: filepath.Join(dir, ".", "a")})
	require.NoError(t, err)
	require.Same(t, a, a2)
	// DifferentPathsReturnDifferentInstances
	b, relB, err := m.Get(cache.Options{Path: filepath.Join(dir, "b")})
	require.NoError(t, err)
	require.NotSame(t, a, b)
	require.Equal(t, 2, m.Live()) // NonEmptyPathRegistersInMap

	// ExpiredEntryDoesNotLeak / ExpiredEntryRecreatedOnNextCall
	relA()
	relA() // a second call is a no-op, not a second release
	require.Equal(t, 2, m.Live())
	relA2()
	require.Equal(t, 1, m.Live())
	require.ErrorIs(t, a.InitializeForProgram("P"), cache.ErrClosed)
	a3, relA3, err := m.Get(cache.Options{Path: filepath.Join(dir, "a")})
	require.NoError(t, err)
	require.NotSame(t, a, a3)
	relA3()
	relB()
	require.Zero(t, m.Live())
}

// EmptyPathSharedAcrossCallers, EmptyPathRecreatedAfterAllRefsDrop,
// EmptyPathDoesNotShareWithMmapPath.
func TestManagerEmptyPath(t *testing.T) {
	m := cache.NewManager(nil)
	a, relA, err := m.Get(cache.Options{})
	require.NoError(t, err)
	b, relB, err := m.Get(cache.Options{})
	require.NoError(t, err)
	require.Same(t, a, b)
	f, relF, err := m.Get(cache.Options{Path: filepath.Join(t.TempDir(), "c")})
	require.NoError(t, err)
	require.NotSame(t, a, f)
	relA()
	relB()
	relF()
	c, relC, err := m.Get(cache.Options{})
	require.NoError(t, err)
	require.NotSame(t, a, c)
	relC()
}

func TestManagerRejectsConflictingOptions(t *testing.T) {
	m := cache.NewManager(nil)
	p := filepath.Join(t.TempDir(), "c")
	_, rel, err := m.Get(cache.Options{Path: p})
	require.NoError(t, err)
	defer rel()
	_, _, err = m.Get(cache.Options{Path: p, Format: spec.FormatV2})
	require.ErrorIs(t, err, cache.ErrOptionsMismatch)
	_, _, err = m.Get(cache.Options{Path: p, LockWait: -1})
	require.ErrorIs(t, err, cache.ErrInvalidOptions)
}

// ConcurrentSamePathSameInstance, ConcurrentDifferentPathsIndependent.
func TestManagerConcurrentGet(t *testing.T) {
	m := cache.NewManager(nil)
	dir := t.TempDir()
	var wg sync.WaitGroup
	got := make([]*cache.Cache, 16)
	rels := make([]func(), 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := filepath.Join(dir, "same")
			if i >= 8 {
				p = filepath.Join(dir, "p"+itoa(i))
			}
			c, rel, err := m.Get(cache.Options{Path: p})
			require.NoError(t, err)
			got[i], rels[i] = c, rel
		}()
	}
	wg.Wait()
	for i := 1; i < 8; i++ {
		require.Same(t, got[0], got[i])
	}
	require.Equal(t, 9, m.Live())
	for _, rel := range rels {
		rel()
	}
	require.Zero(t, m.Live())
}

// SaveAllWalksLiveCaches, SaveAllNoLiveInstancesIsOk.
func TestManagerSaveAll(t *testing.T) {
	m := cache.NewManager(nil)
	require.NoError(t, m.SaveAll())
	p := filepath.Join(t.TempDir(), "c")
	c, rel, err := m.Get(cache.Options{Path: p})
	require.NoError(t, err)
	defer rel()
	require.NoError(t, c.InitializeForProgram("P"))
	pack(t, c, key("w", 1))
	require.NoError(t, m.SaveAll())
	require.Equal(t, uint64(1), c.Stats().Commits)
	require.NoError(t, c.Finalize())
}

// PerCacheIsSortedByPathForStableIndices, MappedBytesCountedWhenFileBacked,
// EmptyPathHeapIsNotCountedAsFallback, OptedInHeapStillCountedAlongsideOptedOut,
// StatsReportOpenFailureWithErrno.
func TestManagerReport(t *testing.T) {
	m := cache.NewManager(nil)
	dir := t.TempDir()
	get := func(p string) *cache.Cache {
		c, rel, err := m.Get(cache.Options{Path: p})
		require.NoError(t, err)
		t.Cleanup(rel)
		require.NoError(t, c.InitializeForProgram("P"))
		pack(t, c, key("w", 1))
		require.NoError(t, c.Finalize())
		return c
	}
	get(filepath.Join(dir, "b"))
	get(filepath.Join(dir, "a"))
	get("")
	get(filepath.Join(dir, "missing", "c"))

	r := m.Report()
	var paths []string
	for _, pc := range r.PerCache {
		paths = append(paths, pc.Path)
	}
	require.Equal(t, []string{"", filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "missing", "c")}, paths)
	require.Positive(t, r.FileBytes)
	require.Positive(t, r.HeapBytes[cache.HeapNoPath])
	require.Positive(t, r.HeapBytes[cache.HeapOpenFailed])
	require.Equal(t, r.HeapBytes[cache.HeapOpenFailed], r.FallbackBytes(), "no-path heap is not a fallback")
	failed := r.PerCache[3].Stats
	require.Equal(t, spec.LoadFailed, failed.Load)
	require.ErrorIs(t, failed.LoadErr, syscall.ENOENT)
}

// A manager's caches use the file system it was made with, unless the
// options name their own.
func TestManagerFileSystem(t *testing.T) {
	dir := t.TempDir()
	opened := map[string]int{}
	seen := func(fs string) func(string, int) error {
		return func(string, int) error {
			opened[fs]++
			return nil
		}
	}
	mfs := &hookFS{FS: vfs.OS(), open: seen("manager")}
	ofs := &hookFS{FS: vfs.OS(), open: seen("options")}
	m := cache.NewManager(mfs)
	for _, tc := range []struct {
		name string
		fs   vfs.FS
		want string
	}{
		{"a", nil, "manager"},
		{"b", ofs, "options"},
	} {
		clear(opened)
		c, rel, err := m.Get(cache.Options{Path: filepath.Join(dir, tc.name), FS: tc.fs})
		require.NoError(t, err)
		require.Equal(t, 0, launch(t, c, "P", keys(1, 1)))
		rel()
		require.Positive(t, opened[tc.want], "%s: %v", tc.name, opened)
		require.Len(t, opened, 1, "%s: %v", tc.name, opened)
	}
}

// SaveAll goes on after a cache whose save fails and returns that error:
// the other cache is committed.
func TestManagerSaveAllReportsFailure(t *testing.T) {
	m := cache.NewManager(nil)
	dir := t.TempDir()
	// A new file is written aside and renamed into place: its commit point.
	fail := &opFails{match: func(op errorfs.Op) bool { return op.Kind == errorfs.OpRename }}
	bad, relBad, err := m.Get(cache.Options{Path: filepath.Join(dir, "bad"), FS: errorfs.Wrap(vfs.OS(), fail)})
	require.NoError(t, err)
	defer relBad()
	good, relGood, err := m.Get(cache.Options{Path: filepath.Join(dir, "good")})
	require.NoError(t, err)
	defer relGood()
	for _, c := range []*cache.Cache{bad, good} {
		require.NoError(t, c.InitializeForProgram("P"))
		pack(t, c, key("w", 1))
	}
	fail.on = true
	err = m.SaveAll()
	fail.on = false
	require.ErrorIs(t, err, errorfs.ErrInjected)
	require.Equal(t, err, bad.Stats().CommitErr)
	require.Zero(t, bad.Stats().Commits)
	require.Equal(t, uint64(1), good.Stats().Commits)
	require.NoError(t, good.Finalize())
}

// FallbackBytes adds up the heap bytes of every reason but no-path (not
// opted in) and unnamed (never persisted).
func TestReportFallbackBytes(t *testing.T) {
	r := cache.Report{HeapBytes: map[cache.HeapReason]uint64{
		cache.HeapNoPath:      1,
		cache.HeapUnnamed:     2,
		cache.HeapLockBusy:    40,
		cache.HeapAllocFailed: 300,
	}}
	require.Equal(t, uint64(340), r.FallbackBytes())
	require.Zero(t, cache.Report{}.FallbackBytes())
}
