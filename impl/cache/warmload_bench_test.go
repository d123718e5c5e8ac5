package cache_test

import (
	"path/filepath"
	"testing"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// BenchmarkWarmLoadCore1184 is the core of a warm launch, the part
// ExecuTorch's loader does too: open the cache, load the committed index
// (InitializeForProgram) and look up all 1,184 weights, on a file in the
// page cache, without prefault and with verification at compute (the
// default: a look-up checks no data). Finalize and Close are not timed.
// cpu-ns/op is the process's CPU time over the same span (GC included).
func BenchmarkWarmLoadCore1184(b *testing.B) {
	ks, sizes := benchKeys()
	for _, f := range []spec.Format{spec.FormatV2, spec.FormatV3} {
		b.Run(f.String(), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "warm")
			opts := cache.Options{Path: path, Format: f, VerifyData: cache.VerifyOnCompute, DisablePrefault: true}
			benchLaunch(b, opts, ks, sizes)
			b.ReportAllocs()
			var cpu int64
			for b.Loop() {
				cpu0 := processCPUNanos()
				c, err := cache.Open(opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.InitializeForProgram("llama"); err != nil {
					b.Fatal(err)
				}
				for _, k := range ks {
					if _, hit := c.LookUp(k); !hit {
						b.Fatalf("%s missed", k.Weight)
					}
				}
				cpu += processCPUNanos() - cpu0
				b.StopTimer()
				if err := c.Finalize(); err != nil {
					b.Fatal(err)
				}
				if err := c.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
