package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

// Every registered kernel, on one cache file, in a chain: each switch to
// the next kernel misses every layer with reason seed (a layout the file
// does not hold), re-packs into the file and computes what heap packing
// with that kernel computes, bit for bit; the launch after it hits every
// layer, packs nothing and again equals the heap run (G1, G3). The chain
// ends on the kernel it started with, whose entries the switches replaced.
// TestLaunchesBitIdentical draws kernels at random; this runs all of them.
func TestKernelSwitchChainEveryKernel(t *testing.T) {
	reg := kernels.NewRegistry()
	ks := reg.Kernels()
	require.GreaterOrEqual(t, len(ks), 12, "the six XNNPACK goi layouts beyond the first six are registered")
	p, err := Preset(PresetSmall, 5)
	require.NoError(t, err)
	n := uint64(p.NumLayers())
	path := tempPath(t, "chain.cache")
	launch := func(k *kernels.Kernel) LaunchReport {
		t.Helper()
		rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Kernel: k, Verify: true, Rows: 2, InputSeed: 3})
		require.NoError(t, err)
		return rep
	}
	for i, k := range append(ks, ks[0]) {
		t.Run(k.Name(), func(t *testing.T) {
			sw := launch(k)
			if i > 0 {
				assert.Equal(t, spec.LoadOK, sw.Load)
				assert.Zero(t, sw.Hits)
				assert.Equal(t, n, sw.Repacks[cache.RepackSeed], "switch repacks %v", sw.Repacks)
			}
			assert.Equal(t, p.NumLayers(), sw.Packed)
			assert.Zero(t, sw.HeapBytes, "packed into the file")
			assert.True(t, sw.Verified, "switch to %s: outputs differ from heap packing", k.Name())

			warm := launch(k)
			assert.Equal(t, n, warm.Hits)
			assert.Zero(t, warm.Packed)
			assert.True(t, warm.Verified, "warm %s: outputs differ from heap packing", k.Name())
			assert.Equal(t, sw.OutputDigest, warm.OutputDigest)
		})
	}
}

// Every ordered pair of registered kernels: a file packed by one is a seed
// miss on every layer for the other, never a hit and never a miss the key
// could only tell by the fingerprint (kernels.TestSeedsAreDistinct checks
// the seeds; this checks the cache sees them).
func TestEveryKernelPairIsASeedMiss(t *testing.T) {
	reg := kernels.NewRegistry()
	p, err := Preset(PresetSmall, 6)
	require.NoError(t, err)
	n := uint64(p.NumLayers())
	for _, a := range reg.Kernels() {
		path := tempPath(t, a.Name()+".cache")
		_, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Kernel: a})
		require.NoError(t, err)
		for _, b := range reg.Kernels() {
			if b == a {
				continue
			}
			// Read-only: b's packings go to heap, so a's file stays as it
			// is for every b.
			rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Kernel: b, ReadOnly: true})
			require.NoError(t, err)
			assert.Zero(t, rep.Hits, "%s on %s's file", b.Name(), a.Name())
			assert.Equal(t, n, rep.Repacks[cache.RepackSeed], "%s on %s's file: repacks %v", b.Name(), a.Name(), rep.Repacks)
		}
	}
}
