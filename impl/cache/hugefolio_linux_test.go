//go:build linux

package cache_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// pmdMappedAfterTouch maps path read-only afresh, loads one byte per page
// and returns how many of its bytes the kernel mapped with PMD entries
// (huge page-cache folios) and the file's size.
func pmdMappedAfterTouch(t *testing.T, path string) (pmd, size int64) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	b, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	defer func() { require.NoError(t, unix.Munmap(b)) }()
	var sum byte
	for i := 0; i < len(b); i += os.Getpagesize() {
		sum += b[i]
	}
	start := strconv.FormatUint(uint64(uintptrOf(b)), 16) + "-"
	pmd = smapsSum(t, "FilePmdMapped:", func(fields []string) bool { return strings.HasPrefix(fields[0], start) })
	runtime.KeepAlive(sum) // the loads must happen
	return pmd, fi.Size()
}

// A new cache file written region by region (page-aligned regions of
// sizes that are not multiples of 2 MiB, as a model's layers are) is left
// in the page cache in huge folios, so that a warm launch's read-only
// mapping of it takes a fault per 2 MiB instead of one per small folio
// (writer.allocate fills each extension with vfs.HugeFiller). Where the
// kernel or file system gives no PMD-mapped file folios even to a file
// written in one aligned 4 MiB write, there is nothing to check.
func TestNewFileWrittenInHugeFolios(t *testing.T) {
	probe := filepath.Join(t.TempDir(), "probe")
	require.NoError(t, os.WriteFile(probe, make([]byte, 4<<20), 0o600))
	if pmd, _ := pmdMappedAfterTouch(t, probe); pmd == 0 {
		t.Skip("this kernel and file system map no file folios with PMDs")
	}
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			path := tempPath(t)
			c, err := cache.Open(cache.Options{Path: path, Format: f})
			require.NoError(t, err)
			require.NoError(t, c.InitializeForProgram("P"))
			for i := range 48 {
				k := key("w"+itoa(i), 1)
				buf, err := c.ReserveSpace(263168 + 4096*(i%5) + i) // ~13 MB in all
				require.NoError(t, err)
				fillPacked(k, buf)
				_, err = c.LookUpOrInsert(k, buf)
				require.NoError(t, err)
			}
			require.NoError(t, c.Finalize())
			require.Empty(t, c.Stats().HeapBytes, "every entry in the file")
			require.NoError(t, c.Close())
			pmd, size := pmdMappedAfterTouch(t, path)
			t.Logf("%d of %d bytes PMD-mapped", pmd, size)
			// Here 10 (v3: the header's huge page is not filled) and 12
			// of 12.6 MiB, the last partial huge page not being a whole
			// folio; half leaves room for a kernel that
			// finds no free 2 MiB block now and then. Written region by
			// region without the fill, none is.
			require.GreaterOrEqual(t, pmd, size/2, "%d of %d bytes PMD-mapped", pmd, size)
		})
	}
}
