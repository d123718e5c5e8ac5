package cache_test

import (
	"sync"
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

// After Finalize a reservation that no look-up asked for is refused:
// ErrNoMiss in a *PathError naming the cache file. A re-pack (a look-up
// that misses, then the reservation) gets space, and so does every packer
// thread that missed before another thread's Finalize, however many: each
// reservation follows its own miss. During initialization nothing is
// refused.
func TestReserveAfterFinalizeNeedsAMiss(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	c := open(t, opts)
	ks := keys(12, 1)
	require.NoError(t, c.InitializeForProgram("P"))
	buf, err := c.ReserveSpace(64)
	require.NoError(t, err, "during initialization")
	_, err = c.LookUpOrInsert(ks[0], buf)
	require.NoError(t, err)
	pack(t, c, ks[1])
	// Packer threads that looked up before Finalize reserve after it.
	var misses int
	for _, k := range ks[2:10] {
		if _, hit := c.LookUp(k); !hit {
			misses++
		}
	}
	require.Equal(t, 8, misses)
	require.NoError(t, c.Finalize())
	var wg sync.WaitGroup
	errs := make([]error, misses)
	for i := range misses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.ReserveSpace(64)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err, "a packer that missed before Finalize")
	}

	_, err = c.ReserveSpace(64)
	require.ErrorIs(t, err, cache.ErrNoMiss)
	var pe *cache.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, opts.Path, pe.Path)
	require.ErrorContains(t, err, opts.Path+": ")

	pack(t, c, ks[10]) // a re-pack: look-up, miss, reservation
	_, err = c.ReserveSpace(64)
	require.ErrorIs(t, err, cache.ErrNoMiss, "the re-pack's miss was used by its reservation")
	require.NoError(t, c.Save())
}
