package cache_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
)

// Close after packing without Finalize or Save loses the packings, and
// says so: ErrUncommitted with their number and the first name, naming the
// cache file. The next launch finds nothing and packs again. After a
// Finalize, Close has nothing to report.
func TestCloseReportsUncommittedPackings(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(3, 1)
	c, err := cache.Open(opts)
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("P"))
	for _, k := range ks {
		pack(t, c, k)
	}
	err = c.Close()
	require.ErrorIs(t, err, cache.ErrUncommitted)
	require.ErrorContains(t, err, `3 entries`)
	require.ErrorContains(t, err, `"w0"`)
	require.ErrorContains(t, err, opts.Path+";")
	require.NoError(t, c.Close(), "a second Close")

	s := process(t, opts, ks)
	require.Zero(t, s.Hits, "Close committed what it says it lost")
	c, err = cache.Open(opts)
	require.NoError(t, err)
	require.Equal(t, len(ks), launch(t, c, "P", ks))
	require.NoError(t, c.Close(), "everything was committed by Finalize")
}

// A re-pack after Finalize that was never saved is lost too.
func TestCloseReportsUnsavedRepack(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(2, 1)
	c, err := cache.Open(opts)
	require.NoError(t, err)
	launch(t, c, "P", ks[:1])
	pack(t, c, ks[1]) // after Finalize, as a compute's re-pack
	require.ErrorIs(t, c.Close(), cache.ErrUncommitted)
}

// A program initialized and finalized is live until DeleteProgram: a
// second InitializeForProgram of it is ErrProgramLive. A second call while
// it is being initialized (another thread of the same launch) is not.
func TestInitializeLiveProgram(t *testing.T) {
	c := open(t, cache.Options{Path: tempPath(t)})
	ks := keys(1, 1)
	require.NoError(t, c.InitializeForProgram("P"))
	require.NoError(t, c.InitializeForProgram("P"), "a second thread of the same initialization")
	pack(t, c, ks[0])
	require.NoError(t, c.Finalize())
	err := c.InitializeForProgram("P")
	require.ErrorIs(t, err, cache.ErrProgramLive)
	require.ErrorContains(t, err, `"P"`)
	require.NoError(t, c.DeleteProgram("P"))
	require.NoError(t, c.InitializeForProgram("P"))
	require.NoError(t, c.Finalize())
}
