//go:build linux

package cache_test

import (
	"bufio"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// privateDirty sums Private_Dirty (bytes) over the mappings of this process
// of file (or its temporary files).
func privateDirty(t *testing.T, file string) int64 {
	t.Helper()
	return smapsPrivateDirty(t, func(fields []string) bool {
		path := ""
		if len(fields) >= 6 {
			path = fields[5]
		}
		// A cold cache packs into "<file>.tmp-*" until its commit
		// renames it.
		return path == file || strings.HasPrefix(path, file+".tmp-")
	})
}

// G5: after Finalize the packed weights of a file-backed cache are clean
// file pages (Private_Dirty of the cache file's mappings about zero; it was
// the full packed size before Finalize), while a heap cache holds them as
// dirty anonymous memory.
func TestG5CleanPagesAfterFinalize(t *testing.T) {
	ks := make([]spec.Key, 64)
	const size = 256 << 10 // 16 MiB in all
	for i := range ks {
		ks[i] = key("g5_"+itoa(i), 1)
	}
	packAll := func(c *cache.Cache) {
		for _, k := range ks {
			buf, err := c.ReserveSpace(size)
			require.NoError(t, err)
			fillPacked(k, buf)
			h, err := c.LookUpOrInsert(k, buf)
			require.NoError(t, err)
			// Read back, as the first compute would: a staged insert's
			// pages are dirty in the page cache but counted in the
			// mapping's Private_Dirty only once it maps them.
			b, err := c.Bytes(h)
			require.NoError(t, err)
			var sum byte
			for i := 0; i < len(b); i += os.Getpagesize() {
				sum += b[i]
			}
			runtime.KeepAlive(sum)
		}
	}
	total := int64(len(ks) * size)

	// The kernel's background writeback may clean some pages before
	// Finalize does (a loaded machine, dirty limits crossed by other
	// tests): then the measurement says nothing, and the launch is
	// repeated on a new file. Every attempt must find Finalize's pages
	// clean; at most three may find the packing's pages already cleaned.
	for _, staged := range []bool{false, true} {
		cleanAfterFinalize(t, staged, packAll, total)
	}

	h := open(t, cache.Options{})
	require.NoError(t, h.InitializeForProgram("P"))
	packAll(h)
	require.NoError(t, h.Finalize())
	var bufs [][]byte
	for _, k := range ks {
		hd, hit := h.LookUp(k)
		require.True(t, hit)
		b, err := h.Bytes(hd)
		require.NoError(t, err)
		bufs = append(bufs, b)
	}
	dirty := privateDirtyAround(t, bufs)
	t.Logf("heap mode: Private_Dirty of the mappings holding the packed bytes %d KiB", dirty>>10)
	require.Greater(t, dirty, total*9/10, "heap packing stays dirty anonymous memory")
	runtime.KeepAlive(bufs)
}

// privateDirtyAround sums Private_Dirty over the mappings that contain any
// of bufs. Every page of bufs was written, so the sum is at least their size
// whatever else those mappings hold.
func privateDirtyAround(t *testing.T, bufs [][]byte) int64 {
	t.Helper()
	return smapsPrivateDirty(t, func(fields []string) bool {
		lo, hi, _ := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		require.NoError(t, errors.Join(err1, err2))
		for _, b := range bufs {
			if p := uint64(uintptrOf(b)); p >= start && p < end {
				return true
			}
		}
		return false
	})
}

// smapsPrivateDirty sums Private_Dirty (bytes) over the mappings of this
// process for which accepts, given the fields of the mapping's
// header line ("start-end perms offset dev inode [path]"), returns true.
func smapsPrivateDirty(t *testing.T, accepts func(fields []string) bool) int64 {
	t.Helper()
	return smapsSum(t, "Private_Dirty:", accepts)
}

// smapsSum sums the smaps field (in bytes; "Private_Dirty:",
// "FilePmdMapped:") over the mappings accepts takes, as smapsPrivateDirty.
func smapsSum(t *testing.T, field string, accepts func(fields []string) bool) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	var total int64
	match := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			match = accepts(fields)
			continue
		}
		if match && len(fields) == 3 && fields[0] == field {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			require.NoError(t, err)
			total += kb << 10
		}
	}
	require.NoError(t, sc.Err())
	return total
}

// cleanAfterFinalize is the file half of TestG5CleanPagesAfterFinalize with
// or without staged writes.
func cleanAfterFinalize(t *testing.T, staged bool, packAll func(*cache.Cache), total int64) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		path := tempPath(t)
		c := open(t, cache.Options{Path: path, MappedWrites: !staged})
		require.NoError(t, c.InitializeForProgram("P"))
		packAll(c)
		before := privateDirty(t, path)
		require.NoError(t, c.Finalize())
		after := privateDirty(t, path)
		t.Logf("file mode, staged %v: Private_Dirty of %s mappings %d KiB before Finalize, %d KiB after (packed %d KiB)",
			staged, path, before>>10, after>>10, total>>10)
		require.Less(t, after, total/100, "staged %v: Finalize left them clean", staged)
		require.NoError(t, c.Close())
		if before > total*9/10 {
			break
		}
		require.Less(t, attempt, 3, "packing dirtied the file pages (before Finalize: %d of %d KiB)", before>>10, total>>10)
	}
}
