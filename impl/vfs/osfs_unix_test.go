//go:build unix

package vfs_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/vfs"
)

func openTemp(t *testing.T, fsys vfs.FS, name string) vfs.File {
	t.Helper()
	f, err := fsys.OpenFile(filepath.Join(t.TempDir(), name), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// Two opens of one path in one process are two open file descriptions, so
// their flocks conflict exactly as two processes' would. The cache relies on
// this for its in-process tests of lock contention.
func TestOSLockConflictsBetweenOpens(t *testing.T) {
	fsys := vfs.OS()
	path := filepath.Join(t.TempDir(), "c.lock")
	a, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer a.Close()
	b, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer b.Close()

	require.NoError(t, a.Lock(vfs.LockExclusive, false))
	require.ErrorIs(t, b.Lock(vfs.LockShared, false), vfs.ErrWouldBlock)
	require.ErrorIs(t, b.Lock(vfs.LockExclusive, false), vfs.ErrWouldBlock)

	// Converting to shared lets other shared holders in.
	require.NoError(t, a.Lock(vfs.LockShared, false))
	require.NoError(t, b.Lock(vfs.LockShared, false))
	require.ErrorIs(t, a.Lock(vfs.LockExclusive, false), vfs.ErrWouldBlock)

	require.NoError(t, b.Unlock())
	require.NoError(t, a.Lock(vfs.LockExclusive, false))
	// Close releases the lock.
	require.NoError(t, a.Close())
	require.NoError(t, b.Lock(vfs.LockExclusive, false))
}

func TestOSMapSyncProtect(t *testing.T) {
	fsys := vfs.OS()
	ps := fsys.PageSize()
	f := openTemp(t, fsys, "data")
	require.NoError(t, f.Allocate(0, int64(2*ps)))
	size, err := f.Size()
	require.NoError(t, err)
	require.Equal(t, int64(2*ps), size)

	m, err := f.Map(int64(ps), ps, vfs.ProtReadWrite)
	require.NoError(t, err)
	require.Equal(t, int64(ps), m.Offset())
	require.Len(t, m.Bytes(), ps)
	copy(m.Bytes(), "packed")
	require.NoError(t, m.Sync())

	// Stores through a shared mapping are visible to ReadAt at once.
	got := make([]byte, 6)
	_, err = f.ReadAt(got, int64(ps))
	require.NoError(t, err)
	require.Equal(t, "packed", string(got))

	require.NoError(t, m.Protect(vfs.ProtRead))
	require.Equal(t, byte('p'), m.Bytes()[0])

	// The mapping outlives the descriptor it was made from.
	require.NoError(t, f.Close())
	require.Equal(t, "packed", string(m.Bytes()[:6]))
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "second Close is a no-op")
	require.Error(t, m.Sync())
	require.Error(t, m.Protect(vfs.ProtRead))
}

func TestOSMapRejectsBadArguments(t *testing.T) {
	fsys := vfs.OS()
	f := openTemp(t, fsys, "data")
	require.NoError(t, f.Allocate(0, int64(fsys.PageSize())))
	_, err := f.Map(0, 0, vfs.ProtRead)
	require.Error(t, err)
	_, err = f.Map(1, 16, vfs.ProtRead) // offset not page-aligned
	require.Error(t, err)
}

func TestOSAllocateExtendsAndKeepsData(t *testing.T) {
	fsys := vfs.OS()
	f := openTemp(t, fsys, "data")
	_, err := f.WriteAt([]byte("head"), 0)
	require.NoError(t, err)
	err = f.Allocate(4096, 8192)
	if errors.Is(err, vfs.ErrNotSupported) {
		t.Skip("filesystem of the temp dir has no fallocate")
	}
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	require.Equal(t, int64(4096+8192), size)
	got := make([]byte, 4)
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, "head", string(got))
	require.NoError(t, f.SyncData())
	require.NoError(t, f.Sync())
}

func TestOSDirectoryOperations(t *testing.T) {
	fsys := vfs.OS()
	dir := t.TempDir()
	for _, n := range []string{"b", "a", "c"} {
		f, err := fsys.OpenFile(filepath.Join(dir, n), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	names, err := fsys.ReadDir(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, names)

	require.NoError(t, fsys.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b")))
	require.NoError(t, fsys.Remove(filepath.Join(dir, "c")))
	require.NoError(t, fsys.SyncDir(dir))
	names, err = fsys.ReadDir(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, names)

	_, err = fsys.Stat(filepath.Join(dir, "a"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = fsys.OpenFile(filepath.Join(dir, "missing", "x"), os.O_RDWR|os.O_CREATE, 0o644)
	require.ErrorIs(t, err, fs.ErrNotExist, "the seam never creates directories")
	require.ErrorIs(t, fsys.SyncDir(filepath.Join(dir, "missing")), fs.ErrNotExist)
}

// A renamed-over file stays readable through an existing mapping: this is
// why the cache replaces files instead of truncating them (PR 20337).
func TestOSMappingSurvivesRenameOver(t *testing.T) {
	fsys := vfs.OS()
	ps := fsys.PageSize()
	dir := t.TempDir()
	live, tmp := filepath.Join(dir, "live"), filepath.Join(dir, "tmp")
	f, err := fsys.OpenFile(live, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, f.Allocate(0, int64(ps)))
	_, err = f.WriteAt([]byte("old"), 0)
	require.NoError(t, err)
	m, err := f.Map(0, ps, vfs.ProtRead)
	require.NoError(t, err)
	defer m.Close()
	require.NoError(t, f.Close())

	g, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = g.WriteAt([]byte("new"), 0)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	require.NoError(t, fsys.Rename(tmp, live))
	require.Equal(t, "old", string(m.Bytes()[:3]))
}

func TestOSPageSize(t *testing.T) {
	ps := vfs.OS().PageSize()
	require.Positive(t, ps)
	require.Zero(t, ps&(ps-1), "page size is a power of two")
}

// On a full filesystem Allocate reports ENOSPC (the seam's contract) and the
// file keeps its size. XPWC_TINYFS names the directory of a small
// filesystem, e.g. a 512 KiB tmpfs (see docs/cache.md); skipped unless set.
func TestOSAllocateReportsENOSPC(t *testing.T) {
	dir := os.Getenv("XPWC_TINYFS")
	if dir == "" {
		t.Skip("set XPWC_TINYFS to the directory of a small filesystem")
	}
	fsys := vfs.OS()
	name := filepath.Join(dir, "vfs-enospc")
	f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close(); _ = os.Remove(name) })
	require.NoError(t, f.Allocate(0, 4096))
	err = f.Allocate(4096, 1<<30)
	require.ErrorIs(t, err, syscall.ENOSPC)
	size, err := f.Size()
	require.NoError(t, err)
	require.Equal(t, int64(4096), size)
}

// Descriptors are close-on-exec: a child started while the lock is held
// does not inherit it (ExecuTorch opened its lock descriptor without
// O_CLOEXEC, so forked children kept the cache locked).
func TestOSLockNotInheritedByChildren(t *testing.T) {
	fsys := vfs.OS()
	path := filepath.Join(t.TempDir(), "c.lock")
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, f.Lock(vfs.LockExclusive, false))
	child := exec.Command("sleep", "5")
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	require.NoError(t, f.Close())

	g, err := fsys.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer g.Close()
	require.NoError(t, g.Lock(vfs.LockExclusive, false), "the child holds no copy of the locked descriptor")
}

// resolver is the optional Resolve of the OS filesystem, as the cache
// finds it.
type resolver interface {
	Resolve(name string) (string, error)
}

// TestOSResolveFollowsLinks: a chain of links, relative and absolute,
// resolves to its final target, also when that target does not exist, and
// a loop is ELOOP.
func TestOSResolveFollowsLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	r, ok := vfs.OS().(resolver)
	require.True(t, ok)
	target := filepath.Join(dir, "real.xpwc")
	require.NoError(t, os.WriteFile(target, []byte("x"), 0o600))
	require.NoError(t, os.Symlink("real.xpwc", filepath.Join(dir, "rel")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "rel"), filepath.Join(dir, "abs")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "missing.xpwc"), filepath.Join(dir, "dangling")))
	require.NoError(t, os.Symlink("loop2", filepath.Join(dir, "loop1")))
	require.NoError(t, os.Symlink("loop1", filepath.Join(dir, "loop2")))

	for link, want := range map[string]string{
		"real.xpwc": target, "rel": target, "abs": target,
		"dangling": filepath.Join(dir, "missing.xpwc"), "new.xpwc": filepath.Join(dir, "new.xpwc"),
	} {
		got, err := r.Resolve(filepath.Join(dir, link))
		require.NoError(t, err, link)
		require.Equal(t, want, got, link)
	}
	_, err = r.Resolve(filepath.Join(dir, "loop1"))
	require.ErrorIs(t, err, syscall.ELOOP)
}

// TestOSResolveFollowsDirectoryLinks: a link anywhere in the directory
// part is followed (absolute and relative paths, a link to a link, ".."
// after a link, which the link's target decides), a path without links
// comes back as it is, and a missing directory is an error: each as
// filepath.EvalSymlinks of the directory says.
func TestOSResolveFollowsDirectoryLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	r, ok := vfs.OS().(resolver)
	require.True(t, ok)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a", "real", "sub"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "b"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "a", "real"), filepath.Join(dir, "b", "abs")))
	require.NoError(t, os.Symlink("../a/real/sub", filepath.Join(dir, "b", "rel")))
	require.NoError(t, os.Symlink("abs", filepath.Join(dir, "b", "chain")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o600))
	t.Chdir(dir)

	for _, p := range []string{
		filepath.Join(dir, "a", "real", "x.xpwc"),
		filepath.Join(dir, "b", "abs", "x.xpwc"),
		filepath.Join(dir, "b", "abs", "sub", "x.xpwc"),
		filepath.Join(dir, "b", "rel", "x.xpwc"),
		filepath.Join(dir, "b", "chain", "sub", "x.xpwc"),
		filepath.Join(dir, "b", "rel", "..", "x.xpwc"),
		"b/abs/x.xpwc", "b/rel/x.xpwc", "a/real/x.xpwc", "x.xpwc", "./b/chain/x.xpwc",
	} {
		want, err := filepath.EvalSymlinks(filepath.Dir(p))
		require.NoError(t, err, p)
		got, err := r.Resolve(p)
		require.NoError(t, err, p)
		require.Equal(t, filepath.Join(want, "x.xpwc"), got, p)
	}
	require.Equal(t, filepath.Join(dir, "a", "real", "sub", "x.xpwc"), must(r.Resolve(filepath.Join(dir, "b", "rel", "x.xpwc"))))
	require.Equal(t, "a/real/x.xpwc", must(r.Resolve("b/../a/real/x.xpwc")))
	for _, p := range []string{filepath.Join(dir, "missing", "x.xpwc"), filepath.Join(dir, "file", "x.xpwc"), "missing/x.xpwc"} {
		_, err := r.Resolve(p)
		require.Error(t, err, p)
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// TestOSOpenFIFODoesNotBlock: opening a FIFO with no writer returns at
// once (O_NONBLOCK) instead of waiting for one forever.
func TestOSOpenFIFODoesNotBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	done := make(chan error, 1)
	go func() {
		f, err := vfs.OS().OpenFile(path, os.O_RDONLY, 0)
		if err == nil {
			err = f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("opening a FIFO blocked")
	}
}
