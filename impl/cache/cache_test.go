package cache_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

func TestOpenRejectsInvalidOptions(t *testing.T) {
	for _, o := range []cache.Options{
		{Format: spec.Format(9)},
		{VerifyData: cache.VerifyPolicy(7)},
		{LockWait: -1},
	} {
		_, err := cache.Open(o)
		require.ErrorIs(t, err, cache.ErrInvalidOptions)
		var oe *cache.OptionsError
		require.ErrorAs(t, err, &oe)
	}
}

// A cache with no path packs to heap, shares entries between programs and
// frees them when the last program is deleted (ExecuTorch
// ReusePackedWeights). It never touches a file (G6): the FS would fail.
func TestHeapOnlyCache(t *testing.T) {
	fsys := &hookFS{FS: vfs.OS(), open: func(name string, _ int) error {
		t.Errorf("heap-only cache opened %s", name)
		return os.ErrPermission
	}}
	c := open(t, cache.Options{FS: fsys})
	ks := keys(3, 7)
	require.Equal(t, 0, launch(t, c, "P1", ks))
	require.Equal(t, 3, launch(t, c, "P2", ks))
	require.Equal(t, []string{"w0w0_b", "w1w1_b", "w2w2_b"}, c.Names())

	s := c.Stats()
	require.Equal(t, spec.LoadDisabled, s.Load)
	require.Equal(t, uint64(3), s.Repacks[cache.RepackNew])
	require.Equal(t, uint64(3), s.Hits)
	require.Positive(t, s.HeapBytes[cache.HeapNoPath])
	require.Zero(t, s.FileBytes)
	require.Zero(t, s.FileSize)

	require.NoError(t, c.DeleteProgram("P1"))
	require.Len(t, c.Names(), 3)
	require.NoError(t, c.DeleteProgram("P2"))
	require.Empty(t, c.Names())
	require.ErrorIs(t, c.DeleteProgram("P2"), cache.ErrUnknownProgram)
}

// Cold launch, then a fresh cache (a new process) on the same path hits
// everything with bit-identical bytes, in both formats (ExecuTorch
// SaveAndLoad_PreservesInferenceOutput).
func TestPersistRoundTrip(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), Format: f}
			ks := keys(5, 3)
			cold := process(t, opts, ks)
			require.Equal(t, spec.LoadMissing, cold.Load)
			require.Equal(t, uint64(5), cold.Repacks[cache.RepackNew])
			require.Empty(t, cold.HeapBytes)
			require.Positive(t, cold.FileBytes)
			require.Equal(t, uint64(1), cold.Commits)

			// A fresh cache (a new process) hits everything, bit-identical
			// (pack compares the bytes), and writes nothing.
			c := open(t, opts)
			require.Equal(t, 5, launch(t, c, "P", ks))
			warm := c.Stats()
			require.Equal(t, spec.LoadOK, warm.Load)
			require.Zero(t, warm.Misses)
			require.Zero(t, warm.Commits)
			require.Equal(t, cold.FileSize, warm.FileSize)

			// The file is what the spec parser accepts.
			df, err := os.Open(opts.Path)
			require.NoError(t, err)
			defer df.Close()
			fi, err := df.Stat()
			require.NoError(t, err)
			got, err := spec.DetectFormat(df, fi.Size())
			require.NoError(t, err)
			require.Equal(t, f, got)
		})
	}
}
