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
		cfg := LaunchConfig{CachePath: path, Program: p, VerifyData: cache.VerifyOnCompute.ID(), Verify: true, DisableVerifyAhead: !ahead}
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
	cfg := LaunchConfig{CachePath: "/x/c.xpwc", Format: spec.FormatV2, VerifyData: cache.VerifyOnLoad.ID(), LockWait: time.Second,
		ReplaceForeign: true, ReadOnly: true, DisablePrefault: true, DisableVerifyAhead: true, AllocateAhead: 7, MappedWrites: true}
	got, err := cfg.CacheOptions()
	require.NoError(t, err)
	want := cache.Options{Path: "/x/c.xpwc", Format: spec.FormatV2, LockWait: time.Second, VerifyData: cache.VerifyOnLoad,
		ReplaceForeign: true, ReadOnly: true, DisablePrefault: true, DisableVerifyAhead: true, AllocateAhead: 7, MappedWrites: true,
		ReuseStaging: true} // the backend never touches a reservation after its insert
	require.Equal(t, want, got)
}

// LaunchConfig.LockWait 0 is the program's LockWaitFor, about what packing
// it costs within [MinLockWait, MaxLockWait]; negative does not wait.
func TestLaunchLockWait(t *testing.T) {
	small, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	llama, err := Preset(PresetLlama1184, 1)
	require.NoError(t, err)
	require.Equal(t, MinLockWait, LockWaitFor(small))
	// 564 MiB of f32 weights: 1.128 s, within llama-1184's measured
	// cold launches (744-1,862 ms).
	require.Equal(t, 564*lockWaitPerMiB, LockWaitFor(llama))
	for _, tc := range []struct {
		set, want time.Duration
		p         *Program
	}{
		{0, LockWaitFor(llama), llama},
		{0, MinLockWait, small},
		{-1, 0, llama},
		{300 * time.Millisecond, 300 * time.Millisecond, llama},
	} {
		got := mustCacheOptions(t, LaunchConfig{Program: tc.p, LockWait: tc.set}).LockWait
		require.Equal(t, tc.want, got, "LockWait %v", tc.set)
	}
}

// The zero LaunchConfig launches with the zero cache.Options: the
// measured defaults are the library's, set in one place.
func TestLaunchDefaultsAreTheCacheDefaults(t *testing.T) {
	got, err := LaunchConfig{CachePath: "/x/c.xpwc"}.CacheOptions()
	require.NoError(t, err)
	got, err = got.WithDefaults()
	require.NoError(t, err)
	// The settings a launch resolves itself: its lock wait comes from
	// its program's size (LockWaitFor), which the cache does not know.
	require.Equal(t, MinLockWait, got.LockWait)
	// and its staging buffer, reused because the backend never touches a
	// reservation after its insert (cache.Options.ReuseStaging).
	require.True(t, got.ReuseStaging)
	want, err := cache.Options{Path: "/x/c.xpwc", LockWait: MinLockWait, ReuseStaging: true}.WithDefaults()
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, DefaultVerifyData, got.VerifyData)
}

func mustCacheOptions(t *testing.T, cfg LaunchConfig) cache.Options {
	t.Helper()
	o, err := cfg.CacheOptions()
	require.NoError(t, err)
	return o
}
