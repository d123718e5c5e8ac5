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
	"github.com/xpwc/xpwc/internal/rawmem"
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

// FillHuge takes only huge-page-aligned ranges inside the file, and
// changes no byte of it: an allocated range reads as zeros after it, and
// bytes written before it stay.
func TestOSFileFillHuge(t *testing.T) {
	fsys := vfs.OS()
	f, err := fsys.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	defer f.Close()
	const size = 2 * vfs.HugePageSize
	require.NoError(t, f.Allocate(0, size))
	_, err = f.WriteAt([]byte("kept"), vfs.HugePageSize-2)
	require.NoError(t, err)
	hf, ok := f.(vfs.HugeFiller)
	require.True(t, ok, "the OS file implements HugeFiller on Linux")
	for _, r := range [][2]int64{{4096, vfs.HugePageSize}, {0, 4096}, {0, 0}, {-vfs.HugePageSize, vfs.HugePageSize}} {
		require.Error(t, hf.FillHuge(r[0], r[1]), "range %v", r)
	}
	require.Error(t, hf.FillHuge(0, 2*size), "past the end of the file")
	if err := hf.FillHuge(0, size); err != nil {
		require.ErrorIs(t, err, vfs.ErrNotSupported)
	}
	b := make([]byte, size)
	_, err = f.ReadAt(b, 0)
	require.NoError(t, err)
	want := make([]byte, size)
	copy(want[vfs.HugePageSize-2:], "kept")
	require.Equal(t, want, b)
}

// faultsOfWrites counts the minor page faults this thread takes writing one
// byte per page of b.
func faultsOfWrites(t *testing.T, b []byte, ps int) int64 {
	t.Helper()
	var before, after unix.Rusage
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &before))
	for i := 0; i < len(b); i += ps {
		b[i] = 1
	}
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &after))
	return after.Minflt - before.Minflt
}

// PopulateHeap enters every page that holds part of the range, an object
// that need not start or end on a page: writing to the pages afterwards
// takes no page fault, where the same writes to fresh anonymous memory
// take one a page (a warm load's tables rest on this).
func TestPopulateHeap(t *testing.T) {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	ps := os.Getpagesize()
	const pages = 64
	anon := func() []byte {
		b, err := unix.Mmap(-1, 0, pages*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		require.NoError(t, err)
		t.Cleanup(func() { _ = unix.Munmap(b) })
		return b
	}
	fresh := faultsOfWrites(t, anon(), ps)
	require.GreaterOrEqual(t, fresh, int64(pages), "fresh anonymous memory faults a page at a time")

	b := anon()
	addr, n := rawmem.Region(b[100 : len(b)-100])
	vfs.PopulateHeap(addr, n)
	if populated := faultsOfWrites(t, b, ps); populated > 2 {
		t.Fatalf("after PopulateHeap, %d faults writing %d pages (fresh: %d)", populated, pages, fresh)
	}
}
