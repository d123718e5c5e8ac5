package cache_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// fileGarbage is the garbage and padding of the file at path by the one
// definition, its byte map (spec.Garbage).
func fileGarbage(t *testing.T, path string) (garbage, padding int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var rs []spec.Range
	switch f, _ := spec.DetectFormat(bytes.NewReader(b), int64(len(b))); f {
	case spec.FormatV2:
		v, err := spec.ParseV2(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		rs = spec.MapV2(v)
	default:
		v, err := spec.ParseV3(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		rs = spec.MapV3(v)
	}
	for _, r := range rs {
		if r.Kind == spec.RangePadding {
			padding += r.Len
		}
	}
	return spec.Garbage(rs), padding
}

// TestGarbageMatchesFile: the garbage and padding the cache reports after
// each commit are those of the file it committed, by the file's byte map
// (one definition: the compaction decision counts with it too): cold
// launches, kernel switches with compaction off (stale packings and old
// index blocks pile up), an invalidation, a compaction, in both formats.
func TestGarbageMatchesFile(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		opts := cache.Options{Path: tempPath(t), Format: f, CompactGarbageRatio: -1}
		check := func(what string, s cache.Stats) {
			t.Helper()
			g, p := fileGarbage(t, opts.Path)
			require.Equal(t, g, s.GarbageBytes, "%s %s: garbage", f, what)
			require.Equal(t, p, s.PaddingBytes, "%s %s: padding", f, what)
		}
		check("cold", process(t, opts, keys(3, 1)))
		check("kernel switch", process(t, opts, keys(3, 2)))
		check("second switch", process(t, opts, keys(4, 1)))
		// A new instance reports the loaded file's figures before it
		// writes anything (its commit has not set them).
		l := open(t, opts)
		require.NoError(t, l.InitializeForProgram("P"))
		check("loaded", l.Stats())
		require.NoError(t, l.Finalize())
		c := open(t, opts)
		require.NoError(t, c.InitializeForProgram("P"))
		require.NoError(t, c.Invalidate("w1"))
		require.NoError(t, c.Finalize())
		require.NoError(t, c.Save())
		check("invalidate", c.Stats())
		require.NoError(t, c.Compact())
		check("compaction", c.Stats())
	}
}
