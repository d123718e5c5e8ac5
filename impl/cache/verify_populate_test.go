package cache_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
)

// A verifying walk whose populate call is refused checks every entry
// regardless, faulting the pages in as it reads them, and asks no more:
// one refused call for the load's index, one for the walk.
func TestVerifyAheadWithoutPopulating(t *testing.T) {
	if _, ok := mustMap(t).(vfs.Populater); !ok {
		t.Skip("mappings of this OS cannot be populated")
	}
	path := tempPath(t)
	ks := keys(2500, 1)
	process(t, cache.Options{Path: path}, ks)

	fs := &popFS{FS: vfs.OS(), refuse: vfs.ErrNotSupported}
	c := open(t, cache.Options{Path: path, FS: fs})
	require.NoError(t, c.InitializeForProgram("P"))
	for _, k := range ks {
		_, hit := c.LookUp(k)
		require.True(t, hit)
	}
	require.NoError(t, c.Finalize()) // starts the walk
	require.Eventually(t, func() bool { return c.Stats().VerifiedAhead == uint64(len(ks)) },
		10*time.Second, time.Millisecond, "the walk stopped at the refusal")
	require.Equal(t, int32(2), fs.refused.Load(), "populate calls after the walk's was refused")
	for _, k := range ks {
		pack(t, c, k)
	}
	require.Equal(t, uint64(len(ks)), c.Stats().Verified)
}
