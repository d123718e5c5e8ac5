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
// one goroutine (RunInterleaved) for a v3 file, a v2 file and a heap-only
// cache. A failure names its seed and prints the calls in order: the two
// v2 commit bugs of TestV2ReservationAfterCommit and
// TestV2CommitAfterEmptyIndex were found this way within 1,500 seeds.
func TestInterleaved(t *testing.T) {
	seeds := 150
	if long() {
		seeds = 1500
	}
	for _, tc := range []struct {
		name string
		opts func(dir string) cache.Options
		cfg  lincheck.ModelConfig
	}{
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
				require.NoError(t, c.Close())
				require.Empty(t, errs, "seed %d", seed)
				h := rec.History()
				opts := checkOpts(t)
				opts.Name = fmt.Sprintf("%s-%s-seed%d", opts.Name, tc.name, seed)
				_, err = lincheck.Check(m, h, opts)
				require.NoError(t, err, "seed %d:\n%s", seed, lincheck.Describe(h))
			}
		})
	}
}
