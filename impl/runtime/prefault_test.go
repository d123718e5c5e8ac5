package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// Prefaulting the mapping changes when pages are faulted (and, with
// VerifyAhead, on which goroutine entries are checked), nothing else: a
// warm launch with it computes the cold launch's output bit for bit, checks
// every entry once, and a rotten entry (the last layer, the walk's first)
// is still found at its first compute and re-packed (G1).
func TestLaunchPrefaultKeepsOutputAndVerification(t *testing.T) {
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	n := uint64(p.NumLayers())
	for _, ahead := range []bool{false, true} {
		path := tempPath(t, "c.xpwc")
		cfg := LaunchConfig{CachePath: path, Program: p, VerifyData: cache.VerifyOnCompute.ID(), Verify: true, Prefault: true, VerifyAhead: ahead}
		cold, err := Launch(context.Background(), cfg)
		require.NoError(t, err)

		warm, err := Launch(context.Background(), cfg)
		require.NoError(t, err)
		require.Equal(t, n, warm.Hits)
		require.Zero(t, warm.Packed)
		require.True(t, warm.Verified, "ahead %v: outputs differ from heap packing", ahead)
		require.Equal(t, cold.OutputDigest, warm.OutputDigest)
		require.Equal(t, n, warm.DataChecks, "ahead %v: entries checked", ahead)
		if !ahead {
			require.Zero(t, warm.DataChecksAhead)
		}

		flipEntryByte(t, path, p.layers[n-1].WeightName())
		rotten, err := Launch(context.Background(), cfg)
		require.NoError(t, err)
		require.True(t, rotten.Verified, "ahead %v: outputs differ from heap packing", ahead)
		require.Equal(t, cold.OutputDigest, rotten.OutputDigest)
		require.Equal(t, uint64(1), rotten.Repacks[cache.RepackCorrupt], "ahead %v", ahead)
		require.Equal(t, 1, rotten.Packed)
	}
}

// The cache options of a launch carry what LaunchConfig says is passed to
// cache.Options. Whether the prefault goroutine gets to check an entry
// before the inference depends on a free core (docs/benchmarks.md), so
// the wiring is checked here rather than through a launch's counts.
func TestLaunchPassesCacheOptions(t *testing.T) {
	cfg := LaunchConfig{CachePath: "/x/c.xpwc", Format: spec.FormatV2, LockWait: time.Second,
		ReplaceForeign: true, ReadOnly: true, Prefault: true, VerifyAhead: true, AllocateAhead: 7, MappedWrites: true}
	got := cacheOptions(cfg, cache.VerifyOnLoad)
	want := cache.Options{Path: "/x/c.xpwc", Format: spec.FormatV2, LockWait: time.Second, VerifyData: cache.VerifyOnLoad,
		ReplaceForeign: true, ReadOnly: true, Prefault: true, VerifyAhead: true, AllocateAhead: 7, MappedWrites: true,
		ReuseStaging: true} // the backend never touches a reservation after its insert
	require.Equal(t, want, got)
}
