package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Benchmarks for docs/kernels.md. Run them in one invocation so the
// baselines (copy, gonum) and the kernels see the same machine state:
//
//	go test ./kernels -run '^$' -bench . -count 5 -benchtime 1s
//
// Packing reports source GB/s (N·K·4 bytes read per op), FC reports
// GFLOP/s (2·M·N·K per op).

func benchCase(n, kdim int) fcCase {
	return newCase(rand.New(rand.NewPCG(uint64(n), uint64(kdim))), 0, n, kdim)
}

func reportGBs(b *testing.B, bytesPerOp int) {
	b.ReportMetric(float64(bytesPerOp)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkCopy is the bound packing is measured against: copying the
// source weights once.
func BenchmarkCopy(b *testing.B) {
	for _, sz := range []int{1024, 4096} {
		b.Run(fmt.Sprintf("%dx%d", sz, sz), func(b *testing.B) {
			c := benchCase(sz, sz)
			dst := make([]float32, len(c.w))
			for b.Loop() {
				copy(dst, c.w)
			}
			reportGBs(b, 4*len(c.w))
		})
	}
}

func BenchmarkPack(b *testing.B) {
	reg := NewRegistry()
	for _, k := range reg.Kernels() {
		sizes := []int{1024}
		if k == reg.Default() {
			sizes = append(sizes, 4096)
		}
		for _, sz := range sizes {
			b.Run(fmt.Sprintf("%s/%dx%d", k.Name(), sz, sz), func(b *testing.B) {
				c := benchCase(sz, sz)
				dst := alignedBytes(k.PackedSize(sz, sz))
				for b.Loop() {
					if err := k.Pack(dst, sz, sz, c.w, c.b); err != nil {
						b.Fatal(err)
					}
				}
				reportGBs(b, 4*len(c.w))
			})
		}
	}
}

// BenchmarkFC compares the kernels with gonum's Sgemm on Y[M×N] = X·Wᵀ,
// K = N = 1024 (gonum gets the unpacked W and no bias; packing is not
// timed for either). gonum's Sgemm splits large products over GOMAXPROCS
// goroutines; the "-par" kernels do the same through ComputeWorkers, the
// others run on one goroutine. Run with -cpu 1,2 to see both.
func BenchmarkFC(b *testing.B) {
	const n, kdim = 1024, 1024
	c := benchCase(n, kdim)
	for _, m := range []int{1, 8, 64} {
		x := newCase(rand.New(rand.NewPCG(uint64(m), 0)), m, 1, kdim).x
		y := make([]float32, m*n)
		flops := 2 * m * n * kdim
		report := func(b *testing.B) {
			b.ReportMetric(float64(flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		b.Run(fmt.Sprintf("gonum/M=%d", m), func(b *testing.B) {
			var impl gonum.Implementation
			for b.Loop() {
				impl.Sgemm(blas.NoTrans, blas.Trans, m, n, kdim, 1, x, kdim, c.w, kdim, 0, y, n)
			}
			report(b)
		})
		var kernels []*Kernel
		fast, slow := NewRegistry(), newRegistry(withoutSIMD())
		kernels = append(kernels, fast.Kernels()...)
		if cpuSIMD >= simdAVX512 {
			kernels = append(kernels, newRegistry(withSIMDAtMost(simdAVX2)).Default())
		}
		if cpuSIMD >= simdAVX2 {
			kernels = append(kernels, slow.Default())
		}
		for _, k := range kernels {
			for _, par := range []bool{false, true} {
				if par && k.ComputePath() == "go" && k != slow.Default() {
					continue // the slow generic paths add nothing in parallel
				}
				name := fmt.Sprintf("%s-%s/M=%d", k.Name(), k.ComputePath(), m)
				if par {
					name = fmt.Sprintf("%s-%s-par/M=%d", k.Name(), k.ComputePath(), m)
				}
				b.Run(name, func(b *testing.B) {
					workers := 1
					if par {
						workers = runtime.GOMAXPROCS(0) // set by -cpu for this run
					}
					packed := packOrFail(b, k, c)
					for b.Loop() {
						if err := k.ComputeWorkers(y, x, m, packed, n, kdim, workers); err != nil {
							b.Fatal(err)
						}
					}
					report(b)
				})
			}
		}
	}
}

// BenchmarkFingerprint is the one-time cost per Kernel value of computing
// its fingerprint (paid on first use, e.g. at backend init).
func BenchmarkFingerprint(b *testing.B) {
	for _, l := range builtinLayouts() {
		b.Run(l.name(), func(b *testing.B) {
			for b.Loop() {
				_ = newKernel(l).Fingerprint()
			}
		})
	}
}
