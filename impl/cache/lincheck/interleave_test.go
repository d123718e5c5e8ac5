package lincheck_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/cache/lincheck"
	"github.com/xpwc/xpwc/spec"
)

// TestInterleaved runs many short seeded interleavings of three clients on
// one goroutine (RunInterleaved) for a v3 and a v2 file, empty and holding
// entries of an earlier process, and a heap-only cache. A failure names its
// seed and prints the calls in order. With the fixes reverted, v2 fails at
// seed 105 (TestV2ReservationAfterCommit, TestV2CommitAfterEmptyIndex) and
// v2-warm at seed 2 (TestV2InvalidateLoadedEntry).
func TestInterleaved(t *testing.T) {
	seeds := 150
	if long() {
		seeds = 1500
	}
	warm := []uint8{1, 2} // name 0 in variant 0, name 1 in variant 1
	warmFile := func(dir string, f spec.Format) cache.Options {
		opts := cache.Options{Path: filepath.Join(dir, "c"), Format: f}
		writeWarm(t, opts, warm)
		return opts
	}
	for _, tc := range []struct {
		name string
		opts func(dir string) cache.Options
		cfg  lincheck.ModelConfig
	}{
		{"v3-warm", func(dir string) cache.Options { return warmFile(dir, spec.FormatV3) }, lincheck.ModelConfig{Warm: warm}},
		{"v2-warm", func(dir string) cache.Options { return warmFile(dir, spec.FormatV2) }, lincheck.ModelConfig{Warm: warm}},
		{"v3", func(dir string) cache.Options { return cache.Options{Path: filepath.Join(dir, "c")} }, lincheck.ModelConfig{}},
		{"v2", func(dir string) cache.Options {
			return cache.Options{Path: filepath.Join(dir, "c"), Format: spec.FormatV2}
		}, lincheck.ModelConfig{}},
		{"v2-nocompact", func(dir string) cache.Options {
			return cache.Options{Path: filepath.Join(dir, "c"), Format: spec.FormatV2, CompactGarbageRatio: -1}
		}, lincheck.ModelConfig{}},
		{"heap", func(string) cache.Options { return cache.Options{} }, lincheck.ModelConfig{HeapOnly: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.NoPartition = true
			m := lincheck.NewModel(cfg)
			for seed := range uint64(seeds) {
				c, err := cache.Open(tc.opts(t.TempDir()))
				require.NoError(t, err)
				w := lincheck.Workload{Clients: 3, Ops: 10, Names: 2, Variants: 2, Programs: 2, Seed: seed}
				rec := lincheck.NewRecorder()
				errs := lincheck.RunInterleaved(c, w, rec, lincheck.NewHandleTable())
				require.NoError(t, c.Check(), "seed %d", seed)
				closeAfterRun(t, c)
				require.Empty(t, errs, "seed %d", seed)
				h := rec.History()
				opts := checkOpts(t)
				opts.Name = fmt.Sprintf("%s-seed%d", opts.Name, seed)
				_, err = lincheck.Check(m, h, opts)
				require.NoError(t, err, "seed %d:\n%s", seed, lincheck.Describe(h))
			}
		})
	}
}

// writeWarm commits, with a cache of its own, the entry of variant
// warm[n]-1 for every name n with warm[n] != 0.
func writeWarm(t *testing.T, opts cache.Options, warm []uint8) {
	t.Helper()
	c, err := cache.Open(opts)
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("seed"))
	for n, w := range warm {
		if w == 0 {
			continue
		}
		buf, err := c.ReserveSpace(lincheck.Size(n))
		require.NoError(t, err)
		lincheck.Pack(buf, n, w-1)
		_, err = c.LookUpOrInsert(lincheck.Key(n, w-1), buf)
		require.NoError(t, err)
	}
	require.NoError(t, c.Finalize())
	closeAfterRun(t, c)
}
