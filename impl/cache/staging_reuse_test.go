package cache_test

import (
	goruntime "runtime"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
)

// TestReuseStagingBuffer: with Options.ReuseStaging a staged reservation
// gets the buffer of the last one whose bytes were written, so a launch
// allocates about one layer's staging memory, not all of it; the bytes
// served and committed are still each packing's own, and the buffer is
// not held past Finalize (G5). Off, every reservation is a new buffer.
func TestReuseStagingBuffer(t *testing.T) {
	const size = 1 << 20
	ks := keys(8, 1)
	for _, reuse := range []bool{false, true} {
		path := tempPath(t)
		c := open(t, cache.Options{Path: path, ReuseStaging: reuse})
		require.NoError(t, c.InitializeForProgram("P"))
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		firsts := map[*byte]bool{}
		hs := make([]cache.Handle, len(ks))
		var last weak.Pointer[byte]
		for i, k := range ks {
			// Sizes shrink, then grow back: a reused buffer returns to the
			// spare whole, so the largest still fits the last.
			buf, err := c.ReserveSpace(sizeAt(i, len(ks), size))
			require.NoError(t, err)
			require.True(t, c.ReservedInFile(buf))
			firsts[&buf[0]] = true
			last = weak.Make(&buf[0])
			fillPacked(k, buf)
			hs[i], err = c.LookUpOrInsert(k, buf)
			require.NoError(t, err)
		}
		goruntime.ReadMemStats(&after)
		grown := after.TotalAlloc - before.TotalAlloc
		if reuse {
			require.Len(t, firsts, 1, "every reservation after the first reuses its buffer")
			require.Less(t, grown, uint64(2*size), "staging allocated for one layer")
		} else {
			require.Len(t, firsts, len(ks))
			require.Greater(t, grown, uint64(len(ks)-1)*size)
		}
		for i, k := range ks {
			want := make([]byte, sizeAt(i, len(ks), size))
			fillPacked(k, want)
			got, err := c.Bytes(hs[i])
			require.NoError(t, err)
			require.Equal(t, want, got, "entry %d served its own packing", i)
		}
		require.NoError(t, c.Finalize())
		goruntime.GC()
		goruntime.GC()
		require.Nil(t, last.Value(), "staging buffer held past Finalize")

		warm := open(t, cache.Options{Path: path, VerifyData: cache.VerifyOnLoad})
		require.NoError(t, warm.InitializeForProgram("P"))
		for i, k := range ks {
			h, hit := warm.LookUp(k)
			require.True(t, hit, "entry %d committed", i)
			want := make([]byte, sizeAt(i, len(ks), size))
			fillPacked(k, want)
			got, err := warm.Bytes(h)
			require.NoError(t, err)
			require.Equal(t, want, got, "entry %d committed its own packing", i)
		}
		require.Zero(t, warm.Stats().Corrupt)
		require.NoError(t, warm.Finalize())
	}
}

// sizeAt is the size of reservation i of n in TestReuseStagingBuffer:
// shrinking by 64 bytes each, the last as large as the first.
func sizeAt(i, n, size int) int {
	if i == n-1 {
		return size
	}
	return size - 64*i
}
