package cache

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// committedCache returns a cache whose program "P" packed and committed one
// entry, w+w_b, into a new v3 file, and that entry.
func committedCache(t *testing.T) (*Cache, *entry) {
	t.Helper()
	c, err := Open(Options{Path: filepath.Join(t.TempDir(), "weights.xpwc"), Format: spec.FormatV3})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	require.NoError(t, c.InitializeForProgram("P"))
	k := spec.Key{Weight: "w", Bias: "w_b", Seed: 1, Fingerprint: 1, Source: 1}
	_, hit := c.LookUp(k)
	require.False(t, hit)
	buf, err := c.ReserveSpace(100)
	require.NoError(t, err)
	buf[0] = 1
	_, err = c.LookUpOrInsert(k, buf)
	require.NoError(t, err)
	require.NoError(t, c.Finalize())
	require.Equal(t, uint64(1), c.Stats().Commits)
	e := c.byName.get(k.Weight, k.Bias)
	require.NotNil(t, e)
	require.True(t, e.committed && e.place == inFile)
	require.NoError(t, c.Check())
	return c, e
}

// Check is what every test of this package runs at cleanup; each of these
// breaks one invariant of a consistent cache and expects Check to name it.
func TestCheckCatchesBrokenState(t *testing.T) {
	t.Run("active program's set is not its own", func(t *testing.T) {
		c, _ := committedCache(t)
		require.NoError(t, c.InitializeForProgram("Q"))
		c.activeIDs = c.programs["P"]
		err := c.Check()
		require.ErrorIs(t, err, ErrInconsistent)
		require.ErrorContains(t, err, `the active program "Q"'s set is not its entry in programs`)
	})
	t.Run("misaligned file entry", func(t *testing.T) {
		c, e := committedCache(t)
		e.rec.Offset++
		err := c.Check()
		require.ErrorIs(t, err, ErrInconsistent)
		require.ErrorContains(t, err, `entry "w+w_b" at misaligned offset `)
	})
	t.Run("committed entry differs from the file", func(t *testing.T) {
		c, e := committedCache(t)
		e.rec.CRC ^= 1
		err := c.Check()
		require.ErrorIs(t, err, ErrInconsistent)
		require.ErrorContains(t, err, `committed entry "w+w_b" differs from the file's index`)
	})
	t.Run("file lists an entry the cache lost", func(t *testing.T) {
		c, e := committedCache(t)
		// The program still holds the entry, so only the index lost it,
		// without the tombstone that would drop it at the next commit.
		c.byName.remove(e)
		e.indexed, e.committed = false, false
		err := c.Check()
		require.ErrorIs(t, err, ErrInconsistent)
		require.ErrorContains(t, err, `file lists "w+w_b", which the cache neither holds nor dropped`)
	})
}

// A program deleted while it is active takes no more references: a look-up
// after DeleteProgram finds its weight but adds it to no program's set,
// and the entry keeps only the references of the programs still live.
func TestDeletedActiveProgramTakesNoReferences(t *testing.T) {
	c, e := committedCache(t)
	require.NoError(t, c.InitializeForProgram("Q"))
	require.NoError(t, c.DeleteProgram("Q"))
	_, hit := c.LookUp(*e.key())
	require.True(t, hit)
	require.Equal(t, int32(1), e.refs, "P's reference only")
	require.NoError(t, c.Check())
}
