package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
)

// Prefaulting the mapping changes when pages are faulted, nothing else: a
// warm launch with it computes the cold launch's output bit for bit, and a
// rotten entry is still found at its first compute and re-packed (G1).
func TestLaunchPrefaultKeepsOutputAndVerification(t *testing.T) {
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	path := tempPath(t, "c.xpwc")
	cfg := LaunchConfig{CachePath: path, Program: p, VerifyData: cache.VerifyOnCompute.ID(), Verify: true, Prefault: true}
	cold, err := Launch(context.Background(), cfg)
	require.NoError(t, err)

	warm, err := Launch(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, p.NumLayers(), int(warm.Hits))
	require.Zero(t, warm.Packed)
	require.True(t, warm.Verified, "outputs differ from heap packing")
	require.Equal(t, cold.OutputDigest, warm.OutputDigest)

	flipEntryByte(t, path, p.layers[p.NumLayers()-1].WeightName())
	rotten, err := Launch(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, rotten.Verified, "outputs differ from heap packing")
	require.Equal(t, cold.OutputDigest, rotten.OutputDigest)
	require.Equal(t, uint64(1), rotten.Repacks[cache.RepackCorrupt])
	require.Equal(t, 1, rotten.Packed)
}
