package lincheck_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/cache/lincheck"
	"github.com/xpwc/xpwc/spec"
)

// packAndInsert is a packer's path for lincheck name n, variant 0:
// reserve, pack, insert.
func packAndInsert(t *testing.T, c *cache.Cache, n int) {
	t.Helper()
	buf, err := c.ReserveSpace(lincheck.Size(n))
	require.NoError(t, err)
	lincheck.Pack(buf, n, 0)
	_, err = c.LookUpOrInsert(lincheck.Key(n, 0), buf)
	require.NoError(t, err)
}

// begin opens the cache and initializes program "p"; the test closes it.
func begin(t *testing.T, opts cache.Options) *cache.Cache {
	t.Helper()
	c, err := cache.Open(opts)
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("p"))
	return c
}

// reopen is the next launch: it opens the file again and initializes
// program "p". The cache is closed when the test ends.
func reopen(t *testing.T, opts cache.Options) *cache.Cache {
	t.Helper()
	c, err := cache.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { closeAfterRun(t, c) })
	require.NoError(t, c.InitializeForProgram("p"))
	return c
}

// TestV2InvalidateLoadedEntry: Invalidate must drop an entry whatever
// format it was loaded from (G3: a changed source re-packs). A v2 file
// stores only the concatenated weight and bias names, so an entry loaded
// from it carries the concatenation as its weight name; Invalidate matched
// weight names exactly and left such entries in the index, where the next
// look-up hit them. Found by TestLinearizableV2.
func TestV2InvalidateLoadedEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.xpwc")
	opts := cache.Options{Path: path, Format: spec.FormatV2}
	k := lincheck.Key(0, 0)
	{
		c := begin(t, opts)
		packAndInsert(t, c, 0)
		require.NoError(t, c.Finalize())
		closeAfterRun(t, c)
	}
	c := reopen(t, opts)
	require.Equal(t, spec.LoadOK, c.Stats().Load)
	_, hit := c.LookUp(k)
	require.True(t, hit, "the committed entry loads")
	require.NoError(t, c.DeleteProgram("p"))

	require.NoError(t, c.Invalidate(k.Weight))
	_, hit = c.LookUp(k)
	require.False(t, hit, "an invalidated v2 entry was still served")
}

// TestV2ReservationAfterCommit: in v2 the commit point is the footer at the
// end of the file, so space a writer appends after its commit and never
// commits (a reservation that is not inserted, or whose insert found the
// entry already there) leaves a file whose end is not a footer. The next
// load rejected the file and dropped every committed entry: a saved entry
// was lost without any crash (G2), and the same cache, re-reading the file
// for its next write, unindexed its own committed entries. Found by
// TestLinearizableV2 (sequence: reserve, insert, compact, reserve, insert
// of the same key, finalize, reserve: the look-up then missed).
func TestV2ReservationAfterCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.xpwc")
	opts := cache.Options{Path: path, Format: spec.FormatV2}
	k := lincheck.Key(0, 0)
	c := begin(t, opts)
	packAndInsert(t, c, 0)
	require.NoError(t, c.Save())
	// A packer reserves and fails: the space is never inserted.
	_, err := c.ReserveSpace(lincheck.Size(1))
	require.NoError(t, err)
	require.NoError(t, c.Finalize())
	closeAfterRun(t, c)

	c = reopen(t, opts)
	require.Equal(t, spec.LoadOK, c.Stats().Load, "load error: %v", c.Stats().LoadErr)
	_, hit := c.LookUp(k)
	require.True(t, hit, "a saved entry was lost")
}

// TestV2CommitAfterEmptyIndex: v2 cannot express an empty index, so a
// commit of nothing removes the file. A session that went on appending to
// the removed inode committed into a file nobody could open: Finalize
// reported success and the next load found no file (G2). Found by a
// sequential interleaving of the lincheck workload (invalidate, save,
// insert, finalize, init: the entry was gone).
func TestV2CommitAfterEmptyIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.xpwc")
	// No automatic compaction: the commit after the empty one appends.
	opts := cache.Options{Path: path, Format: spec.FormatV2, CompactGarbageRatio: -1}
	k0, k1 := lincheck.Key(0, 0), lincheck.Key(1, 0)
	c := begin(t, opts)
	packAndInsert(t, c, 0)
	require.NoError(t, c.Save())
	buf1, err := c.ReserveSpace(lincheck.Size(1)) // the session goes on
	require.NoError(t, err)
	require.NoError(t, c.Invalidate(k0.Weight))
	require.NoError(t, c.Save()) // an empty index: the file goes
	lincheck.Pack(buf1, 1, 0)
	_, err = c.LookUpOrInsert(k1, buf1)
	require.NoError(t, err)
	require.NoError(t, c.Finalize())
	st := c.Stats()
	require.NoError(t, st.CommitErr)
	// k1's space was in the removed file: either the cache kept it in the
	// file and committed it, or it fell back to heap with a reason (G8).
	onHeap := st.HeapBytes[cache.HeapWriteFailed] > 0
	closeAfterRun(t, c)

	c = reopen(t, opts)
	_, hit := c.LookUp(k1)
	if onHeap {
		require.False(t, hit)
		return
	}
	require.True(t, hit, "load %s: the entry committed after the empty index was lost", c.Stats().Load)
}
