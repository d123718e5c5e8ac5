package cache_test

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// opFails fails, with EIO, every call match accepts while on.
type opFails struct {
	on    bool
	match func(errorfs.Op) bool
}

func (f *opFails) MaybeError(op errorfs.Op) error {
	if f.on && f.match(op) {
		return &errorfs.Error{Op: op, Err: syscall.EIO}
	}
	return nil
}

func (f *opFails) String() string { return "opFails" }

// An instance whose packing of a weight could not be flushed keeps it out
// of every commit (G2). When another process then commits the same weight,
// the refresh takes that committed copy into the index: the instance's next
// commit lists it, and a later process hits it. Keeping the unflushed
// packing indexed instead made the next commit leave the other process's
// entry out of the file.
func TestRefreshAfterFailedSyncAdoptsOthersCommit(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), Format: spec.FormatV3}
	x, y := key("x", 1), key("y", 1)

	// The msync of the one region fails; the commit's own flushes would
	// succeed, so only dropping the region's entries keeps them out of it.
	inj := &opFails{match: func(op errorfs.Op) bool { return op.Kind == errorfs.OpMapSync }}
	a := open(t, cache.Options{Path: opts.Path, Format: opts.Format, FS: errorfs.Wrap(vfs.OS(), inj)})
	require.NoError(t, a.InitializeForProgram("P1"))
	pack(t, a, x)
	inj.on = true
	require.NoError(t, a.Finalize())
	inj.on = false
	s := a.Stats()
	require.ErrorIs(t, s.FallbackErr, syscall.EIO)
	require.Zero(t, s.Commits, "nothing durable to commit")

	other := process(t, opts, []spec.Key{x})
	require.Equal(t, uint64(1), other.Commits)

	require.NoError(t, a.InitializeForProgram("P2"))
	_, hit := pack(t, a, x)
	require.True(t, hit)
	_, hit = pack(t, a, y)
	require.False(t, hit)
	require.NoError(t, a.Finalize())
	require.Equal(t, uint64(1), a.Stats().Commits)

	later := process(t, opts, []spec.Key{x, y})
	require.Equal(t, uint64(2), later.Hits, "repacks %v", later.Repacks)
}
