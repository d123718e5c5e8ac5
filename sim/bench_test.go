package sim

import (
	"testing"

	"github.com/xpwc/xpwc/model"
)

// BenchmarkLockstep measures one random run of 60 ops replayed in lockstep
// (model step, cache call, comparison) per iteration, per backend: the
// cost that bounds how many random runs the suite can afford.
func BenchmarkLockstep(b *testing.B) {
	d, err := model.DesignByName("reference")
	if err != nil {
		b.Fatal(err)
	}
	bd := model.DefaultBounds()
	ops := Generate(1, 60, d, bd, GenOptions{})
	for _, be := range []Backend{BackendModel, BackendCrashFS, BackendOS} {
		b.Run(string(be), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cfg := Config{Backend: be}
				if be == BackendOS {
					cfg.Dir = b.TempDir()
				}
				if err := RunOps(cfg, "", bd, ops); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(ops)), "ops/run")
		})
	}
}
