package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/kernels"
)

// G8: whatever the filesystem does, the launch runs and its outputs equal
// heap packing's; the failure shows up in the report, not as an error.
func TestLaunchSurvivesFilesystemFaults(t *testing.T) {
	p, err := Preset(PresetSmall, 2)
	require.NoError(t, err)
	for _, faults := range []string{
		"(if (ops allocate) enospc)",
		"(if (ops create) erofs)",
		"(if (ops map) enomem)",
		"(if (ops lock) wouldblock)",
		"(if (ops syncdata sync) eio)",
		"(if (ops rename) eio)",
		"(randomly 0.2 7 eio)",
	} {
		t.Run(faults, func(t *testing.T) {
			inj, err := errorfs.Parse(faults)
			require.NoError(t, err)
			fs := errorfs.Wrap(vfs.OS(), inj)
			path := tempPath(t, "f.cache")
			for range 2 {
				rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, FS: fs, Verify: true})
				require.NoError(t, err)
				assert.True(t, rep.Verified, "outputs differ from heap packing: %+v", rep)
			}
		})
	}
}

// Destroy releases the program's entries: heap entries are freed, while
// file entries stay indexed, so a re-init on the same cache hits every
// layer, reserves nothing and leaves the file as it was (G4, G5).
func TestDestroyThenReinit(t *testing.T) {
	p, err := Preset(PresetSmall, 4)
	require.NoError(t, err)
	k := kernels.NewRegistry().Default()

	heap, err := cache.Open(cache.Options{})
	require.NoError(t, err)
	defer heap.Close()
	b, err := NewBackend(p, k, heap)
	require.NoError(t, err)
	require.NoError(t, b.Init())
	assert.NotZero(t, sum(heap.Stats().HeapBytes))
	require.NoError(t, b.Destroy())
	assert.Zero(t, sum(heap.Stats().HeapBytes), "destroy left heap entries alive")

	c, err := cache.Open(cache.Options{Path: tempPath(t, "r.cache")})
	require.NoError(t, err)
	defer c.Close()
	b, err = NewBackend(p, k, c)
	require.NoError(t, err)
	require.NoError(t, b.Init())
	first, err := b.Run(p.Input(1, 0), 1)
	require.NoError(t, err)
	size := c.Stats().FileSize
	require.NoError(t, b.Destroy())

	b, err = NewBackend(p, k, c)
	require.NoError(t, err)
	require.NoError(t, b.Init())
	assert.Equal(t, p.NumLayers(), b.Stats().Hits)
	assert.Zero(t, b.Stats().Packed)
	require.NoError(t, c.Save())
	assert.Equal(t, size, c.Stats().FileSize)
	again, err := b.Run(p.Input(1, 0), 1)
	require.NoError(t, err)
	assert.Equal(t, first.Digest, again.Digest)
	require.NoError(t, b.Destroy())
}

func sum[K comparable](m map[K]uint64) (n uint64) {
	for _, v := range m {
		n += v
	}
	return n
}
