package cache_test

import (
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// TestHostileSparseFileFallsBack: a real 64 GiB sparse file with a forged
// footer, commit slot or index header at the cache path costs a launch a
// typed load error, not the process: the weights pack to heap and are
// committed to a fresh file that replaces the forged one (G7), in under a
// second and with heap growth under 64 MiB, whether the index limit
// rejects the file or the decoders do.
func TestHostileSparseFileFallsBack(t *testing.T) {
	ks := keys(3, 1)
	for _, h := range spectest.HostileFiles() {
		for _, limit := range []uint64{0, math.MaxUint64} {
			t.Run(fmt.Sprintf("%s/limit=%d", h.Name, limit), func(t *testing.T) {
				path := tempPath(t)
				require.NoError(t, h.File.Materialize(path))
				format, err := spec.DetectFormat(h.File, h.File.Size)
				require.NoError(t, err)
				opts := cache.Options{Path: path, Format: format, MaxIndexBytes: limit}

				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				start := time.Now()
				s := process(t, opts, ks)
				took := time.Since(start)
				runtime.ReadMemStats(&after)

				require.Equal(t, spec.LoadRejected, s.Load)
				require.ErrorIs(t, s.LoadErr, spec.ErrCorrupt)
				var fe *spec.FormatError
				require.ErrorAs(t, s.LoadErr, &fe)
				assert.Equal(t, uint64(len(ks)), s.Misses)
				assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20))
				assert.Less(t, took, time.Second)
				t.Logf("limit %d: %v in %v, %d bytes allocated", limit, s.LoadErr, took, after.TotalAlloc-before.TotalAlloc)

				// The forged file was a cache's format, so it was replaced;
				// the next launch hits every weight.
				s = process(t, opts, ks)
				require.Equal(t, spec.LoadOK, s.Load)
				assert.Equal(t, uint64(len(ks)), s.Hits)
				assert.Less(t, fileInfo(t, path).Size(), int64(1<<20))
			})
		}
	}
}
