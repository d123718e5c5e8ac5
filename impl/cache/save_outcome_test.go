package cache_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// nthRead fails the n-th (1-based) call that changes nothing on disk
// (read, stat, size, map, close, unlock, munmap...) once armed.
type nthRead struct {
	armed    bool
	n, count int
	injected bool
}

func (r *nthRead) MaybeError(op errorfs.Op) error {
	if !r.armed || op.Kind.IsWrite() {
		return nil
	}
	r.count++
	if r.count == r.n {
		r.injected = true
		return &errorfs.Error{Op: op, Err: errorfs.ErrInjected}
	}
	return nil
}

func (r *nthRead) String() string { return "nthRead" }

// A save's outcome is exact (I12, G2): it fails if and only if its commit
// was not made, and then Stats.CommitErr says why. Each non-mutating call a
// save makes fails in turn; a failure after the commit point (closing the
// writer's file, releasing its lock) must not turn a made commit into a
// reported failure.
func TestSaveOutcomeExactUnderReadErrors(t *testing.T) {
	done := false
	for n := 1; !done; n++ {
		require.Less(t, n, 200)
		path := tempPath(t)
		process(t, cache.Options{Path: path}, keys(1, 1))

		inj := &nthRead{n: n}
		c := open(t, cache.Options{Path: path, FS: errorfs.Wrap(vfs.OS(), inj)})
		require.NoError(t, c.InitializeForProgram("P"))
		extra := key("extra", 1)
		pack(t, c, extra)
		require.NoError(t, c.DeleteProgram("P"))
		inj.armed = true
		err := c.Save()
		inj.armed = false
		done = !inj.injected
		commitErr := c.Stats().CommitErr
		_ = c.Close()

		s := process(t, cache.Options{Path: path}, []spec.Key{extra})
		committed := s.Hits == 1
		if err != nil {
			require.Error(t, commitErr, "read %d: a failed save records its reason", n)
			require.False(t, committed, "read %d: save failed (%v) but its commit was made", n, err)
		} else {
			require.True(t, committed, "read %d: save succeeded but its commit is not on disk", n)
		}
	}
}

// Close does not fail (G8: a backend's destroy must not fail because of the
// cache): each non-mutating call it makes fails in turn, Close still
// returns nil, the failure is recorded in Stats.ReleaseErr, and nothing
// committed is lost.
func TestCloseReportsReleaseFailures(t *testing.T) {
	done := false
	for n := 1; !done; n++ {
		require.Less(t, n, 200)
		path := tempPath(t)
		saved := keys(2, 1)
		inj := &nthRead{n: n}
		c := open(t, cache.Options{Path: path, FS: errorfs.Wrap(vfs.OS(), inj)})
		require.NoError(t, c.InitializeForProgram("P"))
		for _, k := range saved {
			pack(t, c, k)
		}
		require.NoError(t, c.Save()) // the session stays open: a launch is in progress
		inj.armed = true
		require.NoError(t, c.Close(), "read %d", n)
		inj.armed = false
		done = !inj.injected
		if inj.injected {
			require.Error(t, c.Stats().ReleaseErr, "read %d: the failure is recorded", n)
		} else {
			require.NoError(t, c.Stats().ReleaseErr)
		}
		s := process(t, cache.Options{Path: path}, saved)
		require.Equal(t, uint64(len(saved)), s.Hits, "read %d", n)
	}
}

// failReadsFrom fails every ReadAt at or past off, and every mapping that
// reaches it: the bytes cannot be read, and reading them through a mapping
// would fault, which a load from a mapping answers by reading them.
type failReadsFrom struct{ off int64 }

func (r *failReadsFrom) MaybeError(op errorfs.Op) error {
	if op.Kind == errorfs.OpReadAt && op.Off >= r.off || op.Kind == errorfs.OpMap && op.Off+op.Len > r.off {
		return &errorfs.Error{Op: op, Err: errorfs.ErrInjected}
	}
	return nil
}

func (r *failReadsFrom) String() string { return "failReadsFrom" }

// An I/O error reading the newest commit's index is a failed load, not a
// reason to load the older commit: a launch on generation g-1 would commit
// or compact from it and drop what generation g committed (G2, G8).
func TestLoadIOErrorOnNewestIndexDoesNotFallBack(t *testing.T) {
	path := tempPath(t)
	w0, w1 := key("w0", 1), key("w1", 1)
	process(t, cache.Options{Path: path}, []spec.Key{w0})
	fi, err := os.Stat(path)
	require.NoError(t, err)
	process(t, cache.Options{Path: path}, []spec.Key{w0, w1})

	// Everything the second commit appended (w1's data, the newest index)
	// fails to read; the first commit's index stays readable.
	c := open(t, cache.Options{Path: path, FS: errorfs.Wrap(vfs.OS(), &failReadsFrom{off: fi.Size()})})
	launch(t, c, "P", []spec.Key{w0, w1})
	s := c.Stats()
	require.Equal(t, spec.LoadFailed, s.Load, "%v", s.LoadErr)
	require.ErrorIs(t, s.LoadErr, errorfs.ErrInjected)
	require.NoError(t, c.Close())

	s = process(t, cache.Options{Path: path}, []spec.Key{w0, w1})
	require.Equal(t, uint64(2), s.Hits, "the newest commit survives the failed load")
}
