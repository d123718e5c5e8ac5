package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A launch with staged writes (the default; not cache.Options.MappedWrites) computes what
// heap packing computes, cold (from the bytes it wrote and mapped back) and
// warm (from the file a staged launch committed, every entry a hit with a
// good checksum), and the same outputs as a launch without it.
func TestLaunchStagedWritesKeepsOutput(t *testing.T) {
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	n := uint64(p.NumLayers())
	var digests []uint64
	for _, staged := range []bool{false, true} {
		cfg := LaunchConfig{CachePath: tempPath(t, "c.xpwc"), Program: p, Verify: true, MappedWrites: !staged}
		cold, err := Launch(context.Background(), cfg)
		require.NoError(t, err)
		require.True(t, cold.Verified, "staged %v: cold outputs differ from heap packing", staged)
		require.Equal(t, int(n), cold.Packed)
		require.Zero(t, cold.HeapBytes, "staged %v: heap %v", staged, cold.HeapByReason)
		require.Equal(t, uint64(1), cold.Commits)

		warm, err := Launch(context.Background(), cfg)
		require.NoError(t, err)
		require.Equal(t, n, warm.Hits, "staged %v: repacks %v", staged, warm.Repacks)
		require.Zero(t, warm.Packed)
		require.True(t, warm.Verified, "staged %v: warm outputs differ from heap packing", staged)
		require.Equal(t, cold.OutputDigest, warm.OutputDigest)
		digests = append(digests, warm.OutputDigest)
	}
	require.Equal(t, digests[0], digests[1])
}
