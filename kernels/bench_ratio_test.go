package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// The ratio benchmarks time a kernel and its baseline alternately inside
// one loop, so both see the same machine state: on a shared 2-vCPU machine
// separate benchmarks can run minutes apart under different load. Each
// reports the ratio of total times ("x" metrics) and of the fastest
// single iterations ("best-x"), plus both throughputs.

type pairTimer struct{ base, test, minBase, minTest time.Duration }

func (p *pairTimer) add(base, test time.Duration) {
	p.base += base
	p.test += test
	if p.minBase == 0 || base < p.minBase {
		p.minBase = base
	}
	if p.minTest == 0 || test < p.minTest {
		p.minTest = test
	}
}

// BenchmarkPackVsCopy: packing with the fast kr=1 packers against copying
// the same source bytes; goal ≥ 0.6 of copy.
func BenchmarkPackVsCopy(b *testing.B) {
	reg := NewRegistry()
	for _, name := range []string{"f32-goi-nr16", "f32-goi-nr8", "f32-goi-nr16-kr4"} {
		k, _ := reg.Lookup(name)
		for _, sz := range []int{1024, 4096} {
			b.Run(fmt.Sprintf("%s/%dx%d", name, sz, sz), func(b *testing.B) {
				c := benchCase(sz, sz)
				dst := alignedBytes(k.PackedSize(sz, sz))
				cp := make([]float32, len(c.w))
				var p pairTimer
				for b.Loop() {
					t0 := time.Now()
					copy(cp, c.w)
					t1 := time.Now()
					if err := k.Pack(dst, sz, sz, c.w, c.b); err != nil {
						b.Fatal(err)
					}
					p.add(t1.Sub(t0), time.Since(t1))
				}
				bytes := float64(4 * len(c.w))
				b.ReportMetric(bytes*float64(b.N)/p.base.Seconds()/1e9, "copy-GB/s")
				b.ReportMetric(bytes*float64(b.N)/p.test.Seconds()/1e9, "pack-GB/s")
				b.ReportMetric(p.base.Seconds()/p.test.Seconds(), "x-copy")
				b.ReportMetric(p.minBase.Seconds()/p.minTest.Seconds(), "best-x-copy")
			})
		}
	}
}

// BenchmarkFCVsGonum: the default kernel's Compute (one goroutine), on each
// compute path this machine has, against
// gonum's Sgemm on Y = X·Wᵀ, K = N = 1024; goal ≥ 4× gonum. Under -cpu 1
// both use one core; under -cpu 2 gonum splits the product over two
// goroutines while Compute stays on one, and the "par" variant uses
// ComputeWorkers with GOMAXPROCS workers.
func BenchmarkFCVsGonum(b *testing.B) {
	const n, kdim = 1024, 1024
	c := benchCase(n, kdim)
	regs := []*Registry{NewRegistry()}
	if cpuSIMD >= simdAVX512 {
		regs = append(regs, newRegistry(withSIMDAtMost(simdAVX2)))
	}
	if cpuSIMD >= simdAVX2 {
		regs = append(regs, newRegistry(withoutSIMD()))
	}
	for _, reg := range regs {
		k := reg.Default()
		packed := packOrFail(b, k, c)
		for _, par := range []bool{false, true} {
			for _, m := range []int{1, 8, 64} {
				name := fmt.Sprintf("%s/M=%d", k.ComputePath(), m)
				if par {
					name = fmt.Sprintf("%s-par/M=%d", k.ComputePath(), m)
				}
				b.Run(name, func(b *testing.B) {
					x := newCase(rand.New(rand.NewPCG(uint64(m), 0)), m, 1, kdim).x
					yg, yk := make([]float32, m*n), make([]float32, m*n)
					workers := 1
					if par {
						workers = runtime.GOMAXPROCS(0) // set by -cpu for this run
					}
					var impl gonum.Implementation
					var p pairTimer
					for b.Loop() {
						t0 := time.Now()
						impl.Sgemm(blas.NoTrans, blas.Trans, m, n, kdim, 1, x, kdim, c.w, kdim, 0, yg, n)
						t1 := time.Now()
						if err := k.ComputeWorkers(yk, x, m, packed, n, kdim, workers); err != nil {
							b.Fatal(err)
						}
						p.add(t1.Sub(t0), time.Since(t1))
					}
					flops := float64(2 * m * n * kdim)
					b.ReportMetric(flops*float64(b.N)/p.base.Seconds()/1e9, "gonum-GFLOP/s")
					b.ReportMetric(flops*float64(b.N)/p.test.Seconds()/1e9, "GFLOP/s")
					b.ReportMetric(p.base.Seconds()/p.test.Seconds(), "x-gonum")
					b.ReportMetric(p.minBase.Seconds()/p.minTest.Seconds(), "best-x-gonum")
				})
			}
		}
	}
}
