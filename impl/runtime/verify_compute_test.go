package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/corrupt"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

// flipEntryByte corrupts one data byte of the committed entry of weight w
// in the v3 file at path, in place, as bit rot or a foreign writer would.
func flipEntryByte(t *testing.T, path, w string) {
	t.Helper()
	require.NoError(t, corrupt.RotEntry(path, func(k spec.Key) bool { return k.Weight == w }))
}

// initOnFreshCache opens a fresh cache with opts (a new process),
// initializes p on it and returns the backend, ready to run, and its cache.
func initOnFreshCache(t *testing.T, p *Program, k Kernel, opts cache.Options) (*Backend, *cache.Cache) {
	t.Helper()
	c, err := cache.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	b, err := NewBackend(p, k, c)
	require.NoError(t, err)
	require.NoError(t, b.Init())
	t.Cleanup(func() { _ = b.Destroy() })
	return b, c
}

// TestCorruptEntryRepackedAtFirstCompute: under cache.VerifyOnCompute a warm
// launch whose file has one entry's bytes changed initializes without
// checking anything, and its first inference finds the corruption before
// computing with it: the layer is re-packed (reason corrupt), the output
// equals the cold launch's bit for bit, and the re-pack is saved, so the
// next launch hits every layer and finds nothing corrupt.
func TestCorruptEntryRepackedAtFirstCompute(t *testing.T) {
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	k := kernels.NewRegistry().Default()
	path := tempPath(t, "c.xpwc")
	x := p.Input(2, 7)
	opts := cache.Options{Path: path, VerifyData: cache.VerifyOnCompute, DisablePrefault: true}

	launch := func() (*Backend, *cache.Cache) { return initOnFreshCache(t, p, k, opts) }

	cold, _ := launch()
	want, err := cold.Run(x, 2)
	require.NoError(t, err)

	victim := p.layers[1].WeightName()
	flipEntryByte(t, path, victim)

	b, c := launch()
	st := c.Stats()
	require.Equal(t, uint64(p.NumLayers()), st.Hits, "a warm init hits every layer")
	require.Zero(t, st.Verified, "init checked data: verification did not leave initialization")
	require.Zero(t, st.Corrupt)
	require.Zero(t, b.Stats().Repaired)

	got, err := b.Run(x, 2)
	require.NoError(t, err)
	require.Equal(t, want.Digest, got.Digest, "an output was computed from corrupt bytes")
	requireBitsEqual(t, want.Output, got.Output)
	st = c.Stats()
	require.Equal(t, uint64(1), st.Corrupt)
	require.Equal(t, uint64(1), st.Repacks[cache.RepackCorrupt])
	require.Equal(t, 1, b.Stats().Repaired)
	require.Equal(t, 1, b.Stats().Packed)
	require.Zero(t, b.SourceBytesHeld(), "the re-pack left its source held (G5)")

	// Every entry was checked once: a second run checks nothing again.
	verified := st.Verified
	_, err = b.Run(x, 2)
	require.NoError(t, err)
	require.Equal(t, verified, c.Stats().Verified)

	next, nc := launch()
	_, err = next.Run(x, 2)
	require.NoError(t, err)
	require.Zero(t, nc.Stats().Corrupt, "the re-pack was not saved")
	require.Equal(t, uint64(p.NumLayers()), nc.Stats().Hits)
	require.Zero(t, next.Stats().Packed)
}

// TestLaunchOnComputeMatchesColdOutput: the same through Launch, which a
// simrun launch runs: the warm launch reports the re-pack and the cold
// launch's output digest.
func TestLaunchOnComputeMatchesColdOutput(t *testing.T) {
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	path := tempPath(t, "c.xpwc")
	cfg := LaunchConfig{CachePath: path, Program: p, VerifyData: cache.VerifyOnCompute.ID(), Verify: true}
	cold, err := Launch(context.Background(), cfg)
	require.NoError(t, err)
	for i, prefault := range []bool{false, true} {
		flipEntryByte(t, path, p.layers[i].WeightName())
		cfg.DisablePrefault = !prefault
		warm, err := Launch(context.Background(), cfg)
		require.NoError(t, err)
		require.True(t, warm.Verified, "prefault %v: outputs differ from heap packing", prefault)
		require.Equal(t, cold.OutputDigest, warm.OutputDigest)
		require.Equal(t, uint64(1), warm.Repacks[cache.RepackCorrupt])
		require.Equal(t, 1, warm.Packed)
	}
}

// TestNoOutputFromUnverifiedBytes (I13-no-unverified-compute, G1): whichever entries rot before a warm
// launch under cache.VerifyOnCompute (the first layer, one found mid-
// inference after earlier layers computed, the last, or several at once),
// init checks nothing and re-packs nothing, the first inference re-packs
// exactly the rotten layers with reason corrupt, and its output is the
// cold launch's bit for bit; also with the mapping populated on a second
// goroutine meanwhile (on unless cache.Options.DisablePrefault), and with that goroutine
// checking entries ahead of the compute (on unless cache.Options.DisableVerifyAhead), racing
// the inference or finished before it: the walk records only the entries
// that hold, so a rotten one is still found at its compute.
func TestNoOutputFromUnverifiedBytes(t *testing.T) {
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	k := kernels.NewRegistry().Default()
	x := p.Input(3, 11)
	last := p.NumLayers() - 1
	n := uint64(p.NumLayers())
	type walk int
	const (
		none walk = iota
		populate
		ahead     // verify ahead, racing the inference
		aheadDone // verify ahead, the walk over before the inference
	)
	for _, c := range []struct {
		rot  []int
		walk walk
	}{{[]int{0}, none}, {[]int{last / 2}, none}, {[]int{last}, none}, {[]int{0, last / 2, last}, none},
		{[]int{last / 2}, populate}, {[]int{0, last / 2, last}, populate},
		{[]int{last}, ahead}, {[]int{0, last / 2, last}, ahead},
		{[]int{0}, aheadDone}, {[]int{last / 2}, aheadDone}, {[]int{last}, aheadDone}, {[]int{0, last / 2, last}, aheadDone}} {
		rot := c.rot
		path := tempPath(t, "c.xpwc")
		opts := cache.Options{Path: path, VerifyData: cache.VerifyOnCompute, DisablePrefault: c.walk == none, DisableVerifyAhead: c.walk < ahead}
		run := func() (*Backend, *cache.Cache) { return initOnFreshCache(t, p, k, opts) }
		cold, _ := run()
		want, err := cold.Run(x, 3)
		require.NoError(t, err)
		for _, i := range rot {
			flipEntryByte(t, path, p.layers[i].WeightName())
		}
		b, cc := run()
		st := cc.Stats()
		require.Zero(t, st.Verified-st.VerifiedAhead, "layers %v: init checked data", rot)
		require.Zero(t, st.Corrupt, "layers %v: init found corruption", rot)
		require.Zero(t, b.Stats().Packed, "layers %v: init re-packed", rot)
		if c.walk == aheadDone {
			// The walk records every entry that holds, and only those.
			require.Eventually(t, func() bool { return cc.Stats().VerifiedAhead == n-uint64(len(rot)) }, 10*time.Second, time.Millisecond)
		}
		got, err := b.Run(x, 3)
		require.NoError(t, err)
		require.Equal(t, want.Digest, got.Digest, "layers %v (walk %v): an output was computed from unverified bytes", rot, c.walk)
		requireBitsEqual(t, want.Output, got.Output)
		st = cc.Stats()
		require.Equal(t, uint64(len(rot)), st.Repacks[cache.RepackCorrupt], "layers %v (walk %v)", rot, c.walk)
		require.Equal(t, len(rot), b.Stats().Repaired, "layers %v (walk %v)", rot, c.walk)
		require.Equal(t, n, st.Verified, "layers %v (walk %v): every entry checked once, at its compute or ahead of it", rot, c.walk)
		if c.walk == aheadDone {
			require.Equal(t, n-uint64(len(rot)), st.VerifiedAhead, "layers %v: the compute checked again what the walk checked", rot)
		}
	}
}

// TestLaunchDefaultsToOnCompute: a LaunchConfig that names no policy
// checks data at first compute, as DefaultVerifyData says, not at init as
// the cache's zero value would: with one rotten entry, init hits every
// layer and the first inference re-packs it. Naming on-first-use instead
// finds it at init, where it is not a hit; either way it misses once and
// is re-packed once. An unknown name is an invalid option.
func TestLaunchDefaultsToOnCompute(t *testing.T) {
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	path := tempPath(t, "c.xpwc")
	cold, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p})
	require.NoError(t, err)
	n := uint64(p.NumLayers())
	for _, c := range []struct {
		policy       spec.VerifyPolicyID
		hits, misses uint64
	}{{"", n, 1}, {spec.VerifyOnFirstUse, n - 1, 1}} {
		flipEntryByte(t, path, p.layers[0].WeightName())
		warm, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, VerifyData: c.policy})
		require.NoError(t, err)
		require.Equal(t, cold.OutputDigest, warm.OutputDigest, "policy %q", c.policy)
		require.Equal(t, uint64(1), warm.Repacks[cache.RepackCorrupt], "policy %q", c.policy)
		require.Equal(t, c.hits, warm.Hits, "policy %q", c.policy)
		require.Equal(t, c.misses, warm.Misses, "policy %q", c.policy)
	}
	_, err = Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, VerifyData: "on-demand"})
	var oe *cache.OptionsError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "VerifyData", oe.Field)
}
