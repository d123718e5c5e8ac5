package lincheck_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/cache/lincheck"
)

// BenchmarkCheck measures porcupine on recorded histories of 8 clients:
// partitioned by name (4 names) and whole, by history size. The numbers in
// docs/concurrency.md come from here.
func BenchmarkCheck(b *testing.B) {
	for _, ops := range []int{40, 120, 600} {
		w := lincheck.Workload{Clients: 8, Ops: ops, Names: 4, Variants: 2, Programs: 3, Seed: 11}
		c, err := cache.Open(cache.Options{Path: filepath.Join(b.TempDir(), "cache.xpwc")})
		if err != nil {
			b.Fatal(err)
		}
		rec := lincheck.NewRecorder()
		if errs := lincheck.Run(context.Background(), c, w, rec, lincheck.NewHandleTable()); len(errs) > 0 {
			b.Fatal(errs)
		}
		_ = c.Close()
		h := rec.History()
		for _, whole := range []bool{false, true} {
			m := lincheck.NewModel(lincheck.ModelConfig{NoPartition: whole})
			name := fmt.Sprintf("ops=%d/partitioned", len(h))
			if whole {
				name = fmt.Sprintf("ops=%d/whole", len(h))
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					if r := porcupine.CheckOperationsTimeout(m, h, lincheck.DefaultTimeout); r != porcupine.Ok {
						b.Fatalf("check: %s", r)
					}
				}
			})
		}
	}
}

// BenchmarkRun measures recording: one operation of the 8-client workload
// on a file-backed and on a heap-only cache.
func BenchmarkRun(b *testing.B) {
	for _, heap := range []bool{false, true} {
		name := "file"
		if heap {
			name = "heap"
		}
		b.Run(name, func(b *testing.B) {
			ops := 0
			for b.Loop() {
				opts := cache.Options{}
				if !heap {
					opts.Path = filepath.Join(b.TempDir(), "cache.xpwc")
				}
				c, err := cache.Open(opts)
				if err != nil {
					b.Fatal(err)
				}
				rec := lincheck.NewRecorder()
				w := lincheck.Workload{Clients: 8, Ops: 120, Names: 4, Variants: 2, Programs: 3, Seed: 12}
				if errs := lincheck.Run(context.Background(), c, w, rec, lincheck.NewHandleTable()); len(errs) > 0 {
					b.Fatal(errs)
				}
				_ = c.Close()
				ops += len(rec.History())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ops), "ns/recorded-op")
		})
	}
}
