package runtime

import (
	"context"
	"testing"

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
	opts := cache.Options{Path: path, VerifyData: cache.VerifyOnCompute}

	// launch opens a fresh cache (a new process), initializes the program
	// and returns the backend, ready to run, and its cache.
	launch := func() (*Backend, *cache.Cache) {
		c, err := cache.Open(opts)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, c.Close()) })
		b, err := NewBackend(p, k, c)
		require.NoError(t, err)
		require.NoError(t, b.Init())
		t.Cleanup(func() { _ = b.Destroy() })
		return b, c
	}

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
	cfg := LaunchConfig{CachePath: path, Program: p, VerifyData: cache.VerifyOnCompute, Verify: true}
	cold, err := Launch(context.Background(), cfg)
	require.NoError(t, err)
	flipEntryByte(t, path, p.layers[0].WeightName())
	warm, err := Launch(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, warm.Verified, "outputs differ from heap packing")
	require.Equal(t, cold.OutputDigest, warm.OutputDigest)
	require.Equal(t, uint64(1), warm.Repacks[cache.RepackCorrupt])
	require.Equal(t, 1, warm.Packed)
}
