package cache_test

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// parseFile parses the v3 file at path as simrun inspect does.
func parseFile(t *testing.T, path string) *spec.V3File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	v, err := spec.ParseV3(f, fi.Size())
	require.NoError(t, err)
	return v
}

func up(n, to uint64) uint64 { return (n + to - 1) / to * to }

// compacted writes keys into a v3 file, rewrites it with Compact and
// returns the parsed file. The rewrite's last entry is followed by the
// index block, not padded to a page.
func compacted(t *testing.T, path string, ks []spec.Key) *spec.V3File {
	t.Helper()
	opts := cache.Options{Path: path, CompactGarbageRatio: -1}
	process(t, opts, ks)
	c := open(t, opts)
	require.Equal(t, len(ks), launch(t, c, "P", ks))
	require.NoError(t, c.Compact())
	require.Equal(t, uint64(1), c.Stats().Compactions)
	v := parseFile(t, path)
	page := uint64(v.PageSize)
	last := lastEntry(v)
	require.NotZero(t, last.Size%page, "test needs an unpadded last entry")
	require.Less(t, last.Offset+last.Size, v.Commit.IndexOff+1)
	require.Greater(t, last.Offset+up(last.Size, page), uint64(v.Size),
		"the last entry's page padding must not be in the file")
	return v
}

func lastEntry(v *spec.V3File) spec.Entry {
	return slices.MaxFunc(v.Entries, func(a, b spec.Entry) int { return int(a.Offset) - int(b.Offset) })
}

// G4: Stats counts the space of a rewritten file the way the compaction
// check does. The last entry's page padding is not in the file, so it is
// not padding; its padding is the gap to the 8-aligned index block, which
// a rewrite keeps, so a freshly rewritten file has no garbage. Stats and
// the parsed file (simrun inspect's view) agree: spec's garbage is the
// cache's garbage plus padding.
func TestStatsCountUnpaddedLastEntry(t *testing.T) {
	ks := keys(3, 1)
	path := tempPath(t)
	v := compacted(t, path, ks)
	page := uint64(v.PageSize)
	last := lastEntry(v)
	padding := v.Commit.IndexOff - last.Offset - last.Size
	for _, e := range v.Entries {
		if e != last {
			padding += up(e.Size, page) - e.Size
		}
	}
	want := func(t *testing.T, s cache.Stats) {
		t.Helper()
		require.Equal(t, v.Size, s.FileSize)
		require.Equal(t, v.LiveBytes, s.FileBytes)
		require.Equal(t, int64(padding), s.PaddingBytes, "padding of the last entry is not on disk")
		require.Zero(t, s.GarbageBytes, "a freshly rewritten file has no garbage")
		require.Equal(t, int64(v.GarbageBytes), s.GarbageBytes+s.PaddingBytes,
			"cache and inspect disagree")
		require.Equal(t, int64(page+v.Commit.IndexLen+v.LiveBytes)+s.GarbageBytes+s.PaddingBytes, s.FileSize)
	}
	// A new process loading the rewritten file.
	s := process(t, cache.Options{Path: path, CompactGarbageRatio: -1}, ks)
	require.Equal(t, uint64(len(ks)), s.Hits)
	t.Run("loaded", func(t *testing.T) { want(t, s) })

	// The process that rewrote it.
	path2 := tempPath(t)
	opts := cache.Options{Path: path2, CompactGarbageRatio: -1}
	process(t, opts, ks)
	c := open(t, opts)
	launch(t, c, "P", ks)
	require.NoError(t, c.Compact())
	v2 := parseFile(t, path2)
	require.Equal(t, v.Size, v2.Size)
	t.Run("rewriter", func(t *testing.T) { want(t, c.Stats()) })
}

// G4, the compaction decision on a rewritten file (57207eb): dropping
// entries leaves garbage whose ratio to the live bytes lies between what the
// old rule (the last entry counted as padded to a page) and the file's
// layout give. The commit must compact; with the old rule the missing
// padding hid enough garbage that it appended.
func TestCompactionCountsUnpaddedLastEntry(t *testing.T) {
	ks := keys(3, 1)
	path := tempPath(t)
	v := compacted(t, path, ks)
	page := uint64(v.PageSize)
	last := lastEntry(v)

	// What an append commit of the index holding only last would leave.
	idx := spec.EncodeV3Index([]spec.Entry{last})
	end := up(uint64(v.Size), 8) + uint64(len(idx))
	live := page + uint64(len(idx)) + up(last.Size, 8)
	garbage := end - live
	hidden := up(last.Size, page) - up(last.Size, 8)
	require.Greater(t, garbage-hidden, page, "garbage must exceed a page under either rule")
	newRatio := float64(garbage) / float64(live)
	oldRatio := float64(garbage-hidden) / float64(live+hidden)
	require.Less(t, oldRatio, newRatio)

	var dropped []string
	for _, k := range ks {
		if k.Name() != last.Key.Name() {
			dropped = append(dropped, k.Weight)
		}
	}
	require.Len(t, dropped, len(ks)-1)

	c := open(t, cache.Options{Path: path, CompactGarbageRatio: (oldRatio + newRatio) / 2})
	require.NoError(t, c.InitializeForProgram("P"))
	require.NoError(t, c.Invalidate(dropped...))
	require.NoError(t, c.Finalize())
	require.NoError(t, c.Save())
	s := c.Stats()
	require.Equal(t, uint64(1), s.Commits)
	require.Equal(t, uint64(1), s.Compactions, "garbage %d live %d hidden %d", garbage, live, hidden)

	after := parseFile(t, path)
	require.Len(t, after.Entries, 1)
	require.Less(t, after.Size, v.Size)
}
