package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/require"
)

// computePaths returns one registry per compute path this machine can run:
// always the pure-Go path, and each assembly level the CPU has, so all are
// checked here even though NewRegistry would pick only the best.
func computePaths(t *testing.T) map[string]*Registry {
	t.Helper()
	paths := map[string]*Registry{"go": newRegistry(withoutSIMD())}
	if cpuSIMD >= simdAVX2 {
		paths["avx2-fma"] = newRegistry(withSIMDAtMost(simdAVX2))
	}
	if cpuSIMD >= simdAVX512 {
		paths["avx512f"] = newRegistry()
	}
	if len(paths) < 3 {
		t.Logf("CPU SIMD level %d: checking only %d compute paths", cpuSIMD, len(paths))
	}
	return paths
}

// checkCase packs and computes one case and compares with the references.
// It returns "" on success, else a description of the first mismatch.
func checkCase(k *Kernel, c fcCase) string {
	packed := alignedBytes(k.PackedSize(c.n, c.kdim))
	if err := k.Pack(packed, c.n, c.kdim, c.w, c.b); err != nil {
		return "pack: " + err.Error()
	}
	y := make([]float32, c.m*c.n)
	if err := k.Compute(y, c.x, c.m, packed, c.n, c.kdim); err != nil {
		return "compute: " + err.Error()
	}
	ref, mag := naiveFC(c.x, c.m, c.w, c.b, c.n, c.kdim)
	if k.lay.elem != elemQC8W {
		for i := range y {
			if d := math.Abs(float64(y[i]) - ref[i]); !(d <= f32Tol(c.kdim, mag[i])) {
				return fmt.Sprintf("y[%d,%d] = %g, reference %g, |diff| %g > tol %g",
					i/c.n, i%c.n, y[i], ref[i], d, f32Tol(c.kdim, mag[i]))
			}
		}
		return ""
	}
	// qc8w: nearly exact against "quantize, then multiply", and within the
	// quantization step against the f32 reference.
	q, scales := refQuantize(c.w, c.n, c.kdim)
	wq := make([]float32, len(q))
	for i := range q {
		wq[i] = float32(q[i]) * scales[i/c.kdim]
	}
	qref, qmag := naiveFC(c.x, c.m, wq, c.b, c.n, c.kdim)
	for i := range y {
		r, j := i/c.n, i%c.n
		if d := math.Abs(float64(y[i]) - qref[i]); !(d <= f32Tol(c.kdim, qmag[i])) {
			return fmt.Sprintf("y[%d,%d] = %g, quantized reference %g, |diff| %g > tol %g",
				r, j, y[i], qref[i], d, f32Tol(c.kdim, qmag[i]))
		}
		// |w - q·s| ≤ s/2 per weight, so the output is off by at most
		// Σ|x|·s/2, plus float32 rounding of both computations.
		var xabs float64
		for kk := 0; kk < c.kdim; kk++ {
			xabs += math.Abs(float64(c.x[r*c.kdim+kk]))
		}
		tol := xabs*float64(scales[j])*0.5*(1+1e-6) + f32Tol(c.kdim, mag[i]) + f32Tol(c.kdim, qmag[i])
		if d := math.Abs(float64(y[i]) - ref[i]); !(d <= tol) {
			return fmt.Sprintf("y[%d,%d] = %g, f32 reference %g, |diff| %g > quantization tol %g",
				r, j, y[i], ref[i], d, tol)
		}
	}
	return ""
}

// TestPropertyComputeMatchesReference: for every kernel and compute path,
// packed compute equals the naive reference on random shapes, N and K
// mostly not multiples of nr and kr·sr, 1 included, and M below and above
// the micro-kernel's 4 rows.
func TestPropertyComputeMatchesReference(t *testing.T) {
	for path, reg := range computePaths(t) {
		for _, k := range reg.Kernels() {
			t.Run(path+"/"+k.Name(), func(t *testing.T) {
				params := gopter.DefaultTestParametersWithSeed(int64(k.Seed()))
				params.MinSuccessfulTests = 400
				props := gopter.NewProperties(params)
				props.Property("compute(pack(w)) = x·Wᵀ + b", prop.ForAll(
					func(m, n, kdim int, seed uint64) string {
						rng := rand.New(rand.NewPCG(seed, 1))
						return checkCase(k, newCase(rng, m, n, kdim))
					},
					gen.IntRange(0, 11), gen.IntRange(1, 50), gen.IntRange(1, 70), gen.UInt64(),
				))
				props.TestingRun(t)
			})
		}
	}
}

// TestComputeLargeShape runs each kernel once on a layer-sized shape, where
// accumulation error is largest and the SIMD loop runs long.
func TestComputeLargeShape(t *testing.T) {
	for path, reg := range computePaths(t) {
		for _, k := range reg.Kernels() {
			rng := rand.New(rand.NewPCG(7, uint64(k.Seed())))
			require.Empty(t, checkCase(k, newCase(rng, 9, 259, 515)), "%s/%s", path, k.Name())
		}
	}
}

// TestPackMatchesXNNPACKPort: every packer writes exactly the bytes of a
// literal port of XNNPACK's goi packer (zero padding), for random shapes.
func TestPackMatchesXNNPACKPort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	reg := NewRegistry()
	for _, k := range reg.Kernels() {
		for range 40 {
			c := newCase(rng, 0, 1+rng.IntN(40), 1+rng.IntN(40))
			require.Equal(t, xnnpackPort(k.lay, c.n, c.kdim, c.w, c.b), packOrFail(t, k, c),
				"%s n=%d k=%d", k.Name(), c.n, c.kdim)
		}
	}
}

// TestFastPackMatchesGeneric: the unrolled kr=1 packer and the generic one
// agree byte for byte, full and partial panels included, on every transpose
// path this CPU has (the Go loop, AVX2's 8×8 and AVX-512's 16×16 tiles,
// with K below, at and past whole tiles).
func TestFastPackMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for level := simdNone; level <= cpuSIMD; level++ {
		for _, nr := range []int{8, 16} {
			k := newKernel(layout{version: 1, elem: elemF32, nr: nr, kr: 1, sr: 1})
			for _, n := range []int{1, nr - 1, nr, nr + 1, 3*nr + 5, 64} {
				for _, kdim := range []int{1 + rng.IntN(50), 7, 8, 15, 16, 17, 24, 33, 64} {
					c := newCase(rng, 0, n, kdim)
					size := k.PackedSize(c.n, c.kdim)
					fast, gen := alignedBytes(size), alignedBytes(size)
					packF32KR1(fast, nr, c.n, c.kdim, c.w, c.b, level)
					k.packF32Generic(gen, c.n, c.kdim, c.w, c.b)
					require.Equal(t, gen, fast, "simd level %d nr=%d n=%d k=%d", level, nr, n, kdim)
				}
			}
		}
	}
}

// TestHandWorkedLayout pins the goi layout on a case small enough to derive
// by hand from XNNPACK's index formula: nr=2, kr=2, sr=2 (so kr·sr = 4),
// N=3, K=5, W[n][k] = 10n+k+1, bias 100, 200, 300.
func TestHandWorkedLayout(t *testing.T) {
	k := newKernel(layout{version: 1, elem: elemF32, nr: 2, kr: 2, sr: 2})
	w := make([]float32, 15)
	for n := range 3 {
		for kk := range 5 {
			w[n*5+kk] = float32(10*n + kk + 1)
		}
	}
	dst := alignedBytes(k.PackedSize(3, 5))
	require.Len(t, dst, 2*(2+8*2)*4)
	require.NoError(t, k.Pack(dst, 3, 5, w, []float32{100, 200, 300}))
	want := []float32{
		// panel 0: biases, then 4 K-steps of 2 channels × 2 elements; in
		// each group of 4 K elements, channel 1 is rotated by kr = 2.
		100, 200,
		1, 2, 13, 14, // k 0,1 | k 2,3
		3, 4, 11, 12, // k 2,3 | k 0,1
		5, 0, 0, 0, //   k 4,pad | pad,pad
		0, 0, 15, 0, //  pad,pad | k 4,pad
		// panel 1: channel 2 and a padding channel.
		300, 0,
		21, 22, 0, 0,
		23, 24, 0, 0,
		25, 0, 0, 0,
		0, 0, 0, 0,
	}
	require.Equal(t, want, f32s(dst))
}

// TestSR1PackMatchesGeneric: the sr = 1 packers (f32 and qc8w, several kr)
// agree byte for byte with the generic slot-by-slot packers, K tails and
// partial panels included.
func TestSR1PackMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, elem := range []elemKind{elemF32, elemQC8W} {
		for _, nr := range []int{4, 8, 16} {
			for _, kr := range []int{2, 4, 8} {
				k := newKernel(layout{version: 1, elem: elem, nr: nr, kr: kr, sr: 1})
				for range 12 {
					c := newCase(rng, 0, 1+rng.IntN(3*nr), 1+rng.IntN(5*kr))
					size := k.PackedSize(c.n, c.kdim)
					fast, gen := alignedBytes(size), alignedBytes(size)
					for i := range fast {
						fast[i] = 0xCC // the fast packers must write padding too
					}
					if elem == elemQC8W {
						require.NoError(t, k.packQC8WSR1(fast, c.n, c.kdim, c.w, c.b))
						require.NoError(t, k.packQC8W(gen, c.n, c.kdim, c.w, c.b))
					} else {
						packF32SR1(fast, nr, kr, c.n, c.kdim, c.w, c.b)
						k.packF32Generic(gen, c.n, c.kdim, c.w, c.b)
					}
					require.Equal(t, gen, fast, "%s n=%d k=%d", k.Name(), c.n, c.kdim)
				}
			}
		}
	}
}

// TestUnregisteredLayoutsCompute covers parameter combinations no built-in
// kernel uses (qc8w with sr > 1, kr and sr both > 1, small nr), so every
// branch of the packers and of the pure-Go compute is checked against the
// reference, not only the registered ones.
func TestUnregisteredLayoutsCompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, l := range []layout{
		{version: 1, elem: elemQC8W, nr: 8, kr: 2, sr: 2},
		{version: 1, elem: elemQC8W, nr: 4, kr: 1, sr: 1},
		{version: 1, elem: elemQC8W, nr: 2, kr: 4, sr: 2},
		{version: 1, elem: elemF32, nr: 4, kr: 2, sr: 4},
		{version: 1, elem: elemF32, nr: 16, kr: 8, sr: 1},
		{version: 1, elem: elemF32, nr: 1, kr: 1, sr: 1},
	} {
		k := newKernel(l)
		for range 60 {
			c := newCase(rng, rng.IntN(7), 1+rng.IntN(40), 1+rng.IntN(40))
			require.Empty(t, checkCase(k, c), "%s sr=%d", k.Name(), l.sr)
			require.Equal(t, xnnpackPort(l, c.n, c.kdim, c.w, c.b), packOrFail(t, k, c), k.Name())
		}
	}
}
