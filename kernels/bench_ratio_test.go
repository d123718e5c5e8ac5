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
// single iterations ("best-x"), plus both throughputs, mean and best. On a
// loaded machine the best-iteration figures are the stable ones.

type pairTimer struct {
	base, test       time.Duration // totals
	minBase, minTest time.Duration // fastest single call
	nBase, nTest     int
}

// rounds runs base and test alternately, reps calls each per b.Loop
// iteration, timing every call. Switching evicts each other's data from the
// caches; with reps > 1 the later calls of a round run warm, as in a
// steady-state loop, and the best-call figures show that state.
func (p *pairTimer) rounds(b *testing.B, reps int, base, test func()) {
	timeIt := func(f func(), total, best *time.Duration, n *int) {
		t0 := time.Now()
		f()
		d := time.Since(t0)
		*total += d
		*n++
		if *best == 0 || d < *best {
			*best = d
		}
	}
	for b.Loop() {
		for range reps {
			timeIt(base, &p.base, &p.minBase, &p.nBase)
		}
		for range reps {
			timeIt(test, &p.test, &p.minTest, &p.nTest)
		}
	}
}

// report emits throughput (work units per second, mean and best) and the
// ratios; unit is "GB/s" or "GFLOP/s", work the units per call.
func (p *pairTimer) report(b *testing.B, baseName, unit string, work float64) {
	b.ReportMetric(work*float64(p.nBase)/p.base.Seconds(), baseName+"-"+unit)
	b.ReportMetric(work*float64(p.nTest)/p.test.Seconds(), unit)
	b.ReportMetric(work/p.minBase.Seconds(), baseName+"-best-"+unit)
	b.ReportMetric(work/p.minTest.Seconds(), "best-"+unit)
	b.ReportMetric((p.base.Seconds()/float64(p.nBase))/(p.test.Seconds()/float64(p.nTest)), "x-"+baseName)
	b.ReportMetric(p.minBase.Seconds()/p.minTest.Seconds(), "best-x-"+baseName)
}

// BenchmarkPackVsCopy: packing with the fast kr=1 packers against copying
// the same source bytes; goal ≥ 0.6 of copy.
// The default kernel runs once per transpose path this machine has
// ("go", "avx2-fma", "avx512f": its ComputePath names the packer's too).
func BenchmarkPackVsCopy(b *testing.B) {
	type packer struct {
		label string
		k     *Kernel
	}
	var packers []packer
	for _, name := range []string{"f32-goi-nr16", "f32-goi-nr8", "f32-goi-nr16-kr4"} {
		k, _ := NewRegistry().Lookup(name)
		packers = append(packers, packer{name, k})
	}
	for _, level := range []simdLevel{simdNone, simdAVX2} {
		if k := newRegistry(withSIMDAtMost(level)).Default(); level < cpuSIMD {
			packers = append(packers, packer{k.Name() + "-" + k.ComputePath(), k})
		}
	}
	for _, pk := range packers {
		name, k := pk.label, pk.k
		for _, sz := range []int{1024, 4096} {
			b.Run(fmt.Sprintf("%s/%dx%d", name, sz, sz), func(b *testing.B) {
				c := benchCase(sz, sz)
				dst := alignedBytes(k.PackedSize(sz, sz))
				cp := make([]float32, len(c.w))
				var p pairTimer
				p.rounds(b, 3, func() { copy(cp, c.w) }, func() {
					if err := k.Pack(dst, sz, sz, c.w, c.b); err != nil {
						b.Fatal(err)
					}
				})
				p.report(b, "copy", "GB/s", float64(4*len(c.w))/1e9)
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
	ks := []*Kernel{NewRegistry().Default()}
	if cpuSIMD >= simdAVX512 {
		ks = append(ks, newRegistry(withSIMDAtMost(simdAVX2)).Default())
	}
	if cpuSIMD >= simdAVX2 {
		ks = append(ks, newRegistry(withoutSIMD()).Default())
	}
	// The int8 kernel reads a quarter of the bytes per weight: the way
	// past the weight-bandwidth bound at M = 1 (with its own accuracy).
	q, _ := NewRegistry().Lookup("qc8w-goi-nr16")
	ks = append(ks, q)
	for _, k := range ks {
		packed := packOrFail(b, k, c)
		for _, par := range []bool{false, true} {
			for _, m := range []int{1, 8, 64} {
				name := fmt.Sprintf("%s-%s/M=%d", k.Name(), k.ComputePath(), m)
				if par {
					name = fmt.Sprintf("%s-%s-par/M=%d", k.Name(), k.ComputePath(), m)
				}
				b.Run(name, func(b *testing.B) {
					x := newCase(rand.New(rand.NewPCG(uint64(m), 0)), m, 1, kdim).x
					yg, yk := make([]float32, m*n), make([]float32, m*n)
					workers := 1
					if par {
						workers = runtime.GOMAXPROCS(0) // set by -cpu for this run
					}
					var impl gonum.Implementation
					reps := 3
					if k.ComputePath() == "go" {
						reps = 1 // slow enough that one call is steady state
					}
					var p pairTimer
					p.rounds(b, reps, func() {
						impl.Sgemm(blas.NoTrans, blas.Trans, m, n, kdim, 1, x, kdim, c.w, kdim, 0, yg, n)
					}, func() {
						if err := k.ComputeWorkers(yk, x, m, packed, n, kdim, workers); err != nil {
							b.Fatal(err)
						}
					})
					p.report(b, "gonum", "GFLOP/s", float64(2*m*n*kdim)/1e9)
				})
			}
		}
	}
}
