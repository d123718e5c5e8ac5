package cache_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// holdLock takes path's lock file the way another process would (a second
// open file description conflicts even within this process).
func holdLock(t *testing.T, path string, mode vfs.LockMode) vfs.File {
	t.Helper()
	f, err := vfs.OS().OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, f.Lock(mode, false))
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// G8: a busy lock (another process writing) means heap packing for this
// launch with the reason recorded, correct bytes, and an untouched file.
func TestG8LockBusyPacksToHeap(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(3, 1)
	process(t, opts, ks[:1])
	before := fileInfo(t, opts.Path)

	holdLock(t, opts.Path, vfs.LockExclusive)
	s := process(t, opts, ks) // pack() checks the bytes
	require.Equal(t, spec.LoadLocked, s.Load)
	require.ErrorIs(t, s.LoadErr, cache.ErrLockBusy)
	require.Equal(t, uint64(3), s.Misses, "nothing could be loaded")
	require.Positive(t, s.HeapBytes[cache.HeapLockBusy])
	require.Zero(t, s.FileBytes)
	after := fileInfo(t, opts.Path)
	require.Equal(t, before.Size(), after.Size())
	require.Equal(t, before.ModTime(), after.ModTime())
}

// G3 after G8: a heap packing made for a busy lock, still held by a loaded
// program, does not keep the file from converging. The next program's
// launch, with the lock free, misses it (reason heap) and re-packs the
// weight to the file; the first program keeps its bytes, and a new process
// hits the file (docs/bugs.md, "A fall-back heap packing kept out of the
// file").
func TestHeldFallbackRepackedToFile(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(1, 1)
	c := open(t, opts)
	lk := holdLock(t, opts.Path, vfs.LockExclusive)
	require.Zero(t, launch(t, c, "P1", ks))
	require.Positive(t, c.Stats().HeapBytes[cache.HeapLockBusy])
	h1, err := c.LookUpOrInsert(ks[0], nil) // P1's handle
	require.NoError(t, err)
	require.NoError(t, lk.Close())

	require.Zero(t, launch(t, c, "P2", ks), "P2 hit the heap packing P1 holds")
	s := c.Stats()
	require.Equal(t, uint64(1), s.Repacks[cache.RepackHeap], "repacks %v", s.Repacks)
	require.Positive(t, s.FileBytes)
	got, err := c.Bytes(h1)
	require.NoError(t, err, "P1's heap packing lives on")
	require.Equal(t, packed(ks[0]), got)
	require.Equal(t, 1, launch(t, c, "P3", ks), "P3 hits the file entry")
	require.NoError(t, c.Close())

	require.Equal(t, uint64(1), process(t, opts, ks).Hits, "a new process hits the file")
}

// A reader holding the shared lock (loading) does not stop another reader,
// but stops a writer: the writer's new packs go to heap.
func TestSharedLockAdmitsReadersNotWriters(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(3, 1)
	process(t, opts, ks[:2])
	holdLock(t, opts.Path, vfs.LockShared)
	s := process(t, opts, ks)
	require.Equal(t, spec.LoadOK, s.Load)
	require.Equal(t, uint64(2), s.Hits)
	require.Positive(t, s.HeapBytes[cache.HeapLockBusy], "w2 could not be appended")
}

// With LockWait the cache waits for the lock instead of falling back.
func TestLockWaitWaitsForRelease(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), LockWait: 10 * time.Second}
	ks := keys(2, 1)
	process(t, opts, ks)
	f := holdLock(t, opts.Path, vfs.LockExclusive)
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(30 * time.Millisecond)
		_ = f.Unlock()
	}()
	s := process(t, opts, ks)
	<-done
	require.Equal(t, spec.LoadOK, s.Load)
	require.Equal(t, uint64(2), s.Hits)
}

// Waiting for a busy lock polls it with a back-off that doubles up to
// 50 ms: a launch that waits does not spin on a core. Over a wait of
// 150 ms that is about eight attempts (1, 2, 4, 8, 16, 32, 50 ms apart,
// fewer on a loaded machine, where each sleep overshoots).
func TestLockWaitBacksOff(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), LockWait: 150 * time.Millisecond}
	process(t, opts, keys(1, 1))
	holdLock(t, opts.Path, vfs.LockExclusive)
	var attempts atomic.Int64
	inj := &countLocks{path: opts.Path + ".lock", n: &attempts}
	c := open(t, cache.Options{Path: opts.Path, LockWait: opts.LockWait, FS: errorfs.Wrap(vfs.OS(), inj)})
	require.NoError(t, c.InitializeForProgram("P"))
	require.Equal(t, spec.LoadLocked, c.Stats().Load)
	require.Greater(t, attempts.Load(), int64(1), "it waited")
	require.LessOrEqual(t, attempts.Load(), int64(20), "attempts in 150 ms")
}

// countLocks counts the lock requests on one file; it fails none.
type countLocks struct {
	path string
	n    *atomic.Int64
}

func (l *countLocks) MaybeError(op errorfs.Op) error {
	if op.Kind == errorfs.OpLock && op.Path == l.path {
		l.n.Add(1)
	}
	return nil
}

func (l *countLocks) String() string { return "countLocks" }

func TestG8MissingDirectory(t *testing.T) {
	opts := cache.Options{Path: filepath.Join(t.TempDir(), "no", "such", "dir", "w.xpwc")}
	s := process(t, opts, keys(2, 1))
	require.Equal(t, spec.LoadFailed, s.Load)
	require.ErrorIs(t, s.LoadErr, os.ErrNotExist)
	require.ErrorIs(t, s.LoadErr, cache.ErrNoDirectory)
	var pe *cache.PathError
	require.ErrorAs(t, s.LoadErr, &pe)
	require.Equal(t, opts.Path, pe.Path, "the error names the cache file")
	require.NotContains(t, s.LoadErr.Error(), ".lock", "the error names the lock file the caller never configured")
	require.Positive(t, s.HeapBytes[cache.HeapOpenFailed])
	_, err := os.Stat(filepath.Dir(opts.Path))
	require.ErrorIs(t, err, os.ErrNotExist, "the cache never creates directories")

	// A regular file where the directory should be: the same, typed.
	file := tempPath(t)
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	s = process(t, cache.Options{Path: filepath.Join(file, "w.xpwc")}, keys(2, 1))
	require.ErrorIs(t, s.LoadErr, cache.ErrNoDirectory)
	require.ErrorAs(t, s.LoadErr, &pe)
	require.Equal(t, filepath.Join(file, "w.xpwc"), pe.Path)
	require.Positive(t, s.HeapBytes[cache.HeapOpenFailed])
}

// A read-only file system (simulated: tests may run as root, which ignores
// permission bits) refuses every creation with EROFS: the cache turns
// read-only by itself, loads what there is (here nothing) and packs to heap
// with reason read-only, creating no file, not even the lock file.
func TestG8ReadOnlyDirectory(t *testing.T) {
	fsys := &hookFS{FS: vfs.OS(), open: func(name string, flag int) error {
		if flag&(os.O_CREATE|os.O_WRONLY|os.O_RDWR) != 0 {
			return &os.PathError{Op: "open", Path: name, Err: syscall.EROFS}
		}
		return nil
	}}
	opts := cache.Options{Path: tempPath(t), FS: fsys}
	s := process(t, opts, keys(2, 1))
	require.Equal(t, spec.LoadMissing, s.Load)
	require.Positive(t, s.HeapBytes[cache.HeapReadOnly])
	require.Zero(t, s.Commits)
	names, err := os.ReadDir(filepath.Dir(opts.Path))
	require.NoError(t, err)
	require.Empty(t, names)
}

// G8: a full disk is an fallocate error, never a SIGBUS: the weight packs to
// heap and the entries that did fit are committed. The disk holds the
// header and the first two entries' pages: a new file is allocated ahead of
// its reservations, and when that space does not fit the region alone must
// still be taken.
func TestG8DiskFullFallsBackToHeap(t *testing.T) {
	ks := keys(4, 1)
	page := int64(os.Getpagesize())
	capacity := page // the v3 header
	for _, k := range ks[:2] {
		capacity += (int64(sizeOf(k)) + page - 1) / page * page
	}
	fsys := &hookFS{FS: vfs.OS(), allocate: func(_ string, off, length int64) error {
		if off+length > capacity {
			return syscall.ENOSPC
		}
		return nil
	}}
	opts := cache.Options{Path: tempPath(t), FS: fsys}
	s := process(t, opts, ks)
	require.ErrorIs(t, s.FallbackErr, syscall.ENOSPC)
	require.Positive(t, s.HeapBytes[cache.HeapAllocFailed])
	require.Equal(t, uint64(1), s.Commits)

	s = process(t, cache.Options{Path: opts.Path}, ks)
	require.Equal(t, uint64(2), s.Hits, "the two entries that fit were committed")
	require.Equal(t, uint64(2), s.Repacks[cache.RepackNew])
}

// A failed mmap is a heap fall-back with reason map-failed: at ReserveSpace
// with MappedWrites, at the insert of a staged reservation (the default),
// where nothing of it is committed.
func TestG8MmapFailureFallsBackToHeap(t *testing.T) {
	for _, mapped := range []bool{false, true} {
		fsys := &hookFS{FS: vfs.OS(), mmap: func(string) error { return syscall.ENOMEM }}
		opts := cache.Options{Path: tempPath(t), FS: fsys, MappedWrites: mapped}
		ks := keys(2, 1)
		s := process(t, opts, ks)
		require.Equal(t, uint64(sizeOf(ks[0])+sizeOf(ks[1])), s.HeapBytes[cache.HeapMapFailed], "mapped %v", mapped)
		require.ErrorIs(t, s.FallbackErr, syscall.ENOMEM)
		require.Zero(t, s.Commits, "mapped %v: nothing in the file to commit", mapped)
	}
}

// A crashed writer's temporary file is removed by the next writer.
func TestStaleTempFilesRemoved(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	stale := opts.Path + ".tmp-999999-0123456789abcdef"
	require.NoError(t, os.WriteFile(stale, []byte("half a file"), 0o644))
	other := filepath.Join(filepath.Dir(opts.Path), "unrelated.tmp-1")
	require.NoError(t, os.WriteFile(other, nil, 0o644))
	process(t, opts, keys(1, 1))
	_, err := os.Stat(stale)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(other)
	require.NoError(t, err)
	names, err := os.ReadDir(filepath.Dir(opts.Path))
	require.NoError(t, err)
	for _, n := range names {
		require.False(t, strings.Contains(n.Name(), ".tmp-") && strings.HasPrefix(n.Name(), "weights"), n.Name())
	}
}

type pageFS struct {
	vfs.FS
	page int
}

func (p pageFS) PageSize() int { return p.page }

// A page size v3 cannot record (over 64 KiB) means heap packing, not files
// that every reader would reject.
func TestG8UnsupportedPageSize(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), FS: pageFS{FS: vfs.OS(), page: 256 << 10}}
	s := process(t, opts, keys(2, 1))
	require.Equal(t, spec.LoadFailed, s.Load)
	require.ErrorIs(t, s.LoadErr, vfs.ErrNotSupported)
	require.Positive(t, s.HeapBytes[cache.HeapNotSupported])
	_, err := os.Stat(opts.Path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// The page sizes a cache accepts are 1 to spec.MaxPageSize (64 KiB, the
// largest a v3 file records), both ends included: at 64 KiB the file is
// written and read back with that page recorded; a file system reporting
// no page size (0) packs to heap, as one over the limit does.
func TestPageSizeBounds(t *testing.T) {
	for _, tc := range []struct {
		page int
		ok   bool
	}{
		{spec.MaxPageSize, true},
		{spec.MaxPageSize + 1, false},
		{0, false},
	} {
		t.Run(itoa(tc.page), func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), FS: pageFS{FS: vfs.OS(), page: tc.page}}
			s := process(t, opts, keys(2, 1))
			if !tc.ok {
				require.ErrorIs(t, s.LoadErr, vfs.ErrNotSupported)
				require.Positive(t, s.HeapBytes[cache.HeapNotSupported])
				return
			}
			require.NoError(t, s.LoadErr)
			require.Empty(t, s.HeapBytes)
			b, err := os.ReadFile(opts.Path)
			require.NoError(t, err)
			v, err := spec.ParseV3(bytes.NewReader(b), int64(len(b)))
			require.NoError(t, err)
			require.Equal(t, tc.page, v.PageSize)
			require.Equal(t, uint64(2), process(t, opts, keys(2, 1)).Hits)
		})
	}
}

// G8 on a real full filesystem: XPWC_TINYFS names the directory of a small
// filesystem (for example a 512 KiB tmpfs:
// mount -t tmpfs -o size=512k tmpfs /mnt/xpwc-tiny). Packing more than fits
// gets ENOSPC from fallocate, never a SIGBUS; the rest goes to heap and what
// fit is committed. Skipped unless the variable is set (mounting needs root).
func TestG8RealDiskFull(t *testing.T) {
	dir := os.Getenv("XPWC_TINYFS")
	if dir == "" {
		t.Skip("set XPWC_TINYFS to the directory of a small filesystem")
	}
	path := filepath.Join(dir, "full-"+itoa(os.Getpid()))
	t.Cleanup(func() {
		names, _ := filepath.Glob(path + "*")
		for _, n := range names {
			_ = os.Remove(n)
		}
	})
	ks := make([]spec.Key, 256) // about 1.5 MiB of pages
	for i := range ks {
		ks[i] = key("big"+itoa(i), 1)
	}
	s := process(t, cache.Options{Path: path}, ks) // pack checks every byte
	require.ErrorIs(t, s.FallbackErr, syscall.ENOSPC)
	require.Positive(t, s.HeapBytes[cache.HeapAllocFailed])
	t.Logf("file %d bytes, heap %d bytes, commit error: %v", s.FileBytes, s.HeapBytes[cache.HeapAllocFailed], s.CommitErr)
}

// Options.CheckPath: Open refuses a path that is a directory, or whose
// directory is missing or a file, with a *PathError naming the cache file
// (ErrNotRegular, ErrNoDirectory); a new file in an existing directory, an
// existing cache file and a dangling link into an existing directory are
// accepted. Without it Open accepts all of them and the first load
// records the same typed error, packing to heap (G8): the directory is
// refused as not-regular, with its path named.
func TestCheckPathRefusesUnusablePathsAtOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	for _, tc := range []struct {
		name, path string
		want       error
	}{
		{"a directory", dir, cache.ErrNotRegular},
		{"a missing directory", filepath.Join(dir, "no", "w.xpwc"), cache.ErrNoDirectory},
		{"a file for a directory", filepath.Join(file, "w.xpwc"), cache.ErrNoDirectory},
	} {
		_, err := cache.Open(cache.Options{Path: tc.path, CheckPath: true})
		require.ErrorIs(t, err, tc.want, tc.name)
		var pe *cache.PathError
		require.ErrorAs(t, err, &pe, tc.name)
		require.Equal(t, tc.path, pe.Path, tc.name)
		require.NotContains(t, err.Error(), ".lock", tc.name)

		s := process(t, cache.Options{Path: tc.path}, keys(1, 1))
		require.ErrorIs(t, s.LoadErr, tc.want, "%s: without CheckPath, recorded at the load", tc.name)
		require.ErrorAs(t, s.LoadErr, &pe, tc.name)
		require.Equal(t, tc.path, pe.Path, tc.name)
	}
	fresh := filepath.Join(dir, "new.xpwc")
	c, err := cache.Open(cache.Options{Path: fresh, CheckPath: true})
	require.NoError(t, err, "a new file in an existing directory")
	require.Zero(t, launch(t, c, "P", keys(1, 1)))
	require.NoError(t, c.Close())
	c, err = cache.Open(cache.Options{Path: fresh, CheckPath: true})
	require.NoError(t, err, "an existing cache file")
	require.NoError(t, c.Close())
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(filepath.Join(dir, "target.xpwc"), link))
	c, err = cache.Open(cache.Options{Path: link, CheckPath: true})
	require.NoError(t, err, "a dangling link: its target is the file to create")
	require.NoError(t, c.Close())
}
