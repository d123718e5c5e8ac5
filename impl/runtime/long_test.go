package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// TestLlamaLaunches runs the llama-1184 preset (593 MB packed) cold and
// warm against one cache file, each verified bit for bit against heap
// packing. It writes about 600 MB to the temp directory and takes a few
// seconds, so it runs only with XPWC_LONG=1 (docs/runtime.md).
func TestLlamaLaunches(t *testing.T) {
	if os.Getenv("XPWC_LONG") != "1" {
		t.Skip("set XPWC_LONG=1")
	}
	p, err := Preset(PresetLlama1184, 1)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "llama.cache")
	var cold LaunchReport
	for _, launch := range []string{"cold", "warm"} {
		rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Verify: true, MeasureMemory: true})
		require.NoError(t, err)
		t.Logf("%s: load %s, hits %d, misses %d, packed %d, file bytes %d, heap bytes %d, file size %d, garbage %d, mapped rss %d, dirty %d, init %v, run %v",
			launch, rep.Load, rep.Hits, rep.Misses, rep.Packed, rep.FileBytes, rep.HeapBytes, rep.FileSize, rep.GarbageBytes,
			rep.MappedRSS, rep.MappedDirty, rep.InitTime, rep.RunTime)
		assert.True(t, rep.Verified, launch)
		assert.Zero(t, rep.HeapBytes, launch)
		assert.Less(t, rep.MappedDirty, int64(rep.FileBytes/100), "%s: G5 dirty pages", launch)
		if launch == "cold" {
			cold = rep
			assert.Equal(t, p.NumLayers(), rep.Packed)
			continue
		}
		assert.Equal(t, spec.LoadOK, rep.Load)
		assert.Zero(t, rep.Packed)
		assert.Equal(t, uint64(p.NumLayers()), rep.Hits)
		assert.Equal(t, cold.FileSize, rep.FileSize)
		assert.Equal(t, cold.OutputDigest, rep.OutputDigest)
	}
}
