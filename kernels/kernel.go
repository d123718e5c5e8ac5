package kernels

import "sync"

// A Kernel is one registered FC packer + compute pair with a fixed packed
// layout. Kernels are immutable after construction except for the lazily
// computed fingerprint, and safe for concurrent use.
type Kernel struct {
	name string
	lay  layout
	// simd selects the assembly micro-kernels: never above what the CPU
	// supports, and none unless the layout is the one they read.
	simd simdLevel

	fpOnce sync.Once
	fp     uint64
}

// option adjusts kernel construction; tests use it to force the pure-Go path.
type option func(*config)

type config struct{ maxSIMD simdLevel }

// simdLevel orders the assembly compute paths of the nr16 kr1 layouts.
type simdLevel uint8

const (
	simdNone   simdLevel = iota // pure Go
	simdAVX2                    // AVX2 + FMA: 4x16 and 1x16
	simdAVX512                  // AVX-512F: 8x16, then the AVX2 kernels for leftover rows
)

// withoutSIMD disables the assembly micro-kernels so that the pure-Go path
// is exercised even on CPUs that have AVX2 and FMA.
func withoutSIMD() option { return withSIMDAtMost(simdNone) }

// withSIMDAtMost caps the assembly level, so that tests reach the AVX2
// path on CPUs that also have AVX-512.
func withSIMDAtMost(l simdLevel) option { return func(c *config) { c.maxSIMD = min(c.maxSIMD, l) } }

func newKernel(l layout, opts ...option) *Kernel {
	c := config{maxSIMD: simdAVX512}
	for _, o := range opts {
		o(&c)
	}
	k := &Kernel{name: l.name(), lay: l}
	canonical16 := l.nr == 16 && l.kr == 1 && l.sr == 1 && !l.biasLast
	switch {
	case canonical16 && l.elem == elemF32:
		k.simd = min(cpuSIMD, c.maxSIMD)
	case canonical16 && l.elem == elemQC8W:
		k.simd = min(cpuSIMD, c.maxSIMD, simdAVX2) // no AVX-512 variant
	}
	return k
}

// Name is the registered name, e.g. "f32-goi-nr16" or "qc8w-goi-nr16-kr4".
func (k *Kernel) Name() string { return k.name }

// Seed identifies the packed layout: a hash of its parameters and its
// explicit layout version (see package doc).
func (k *Kernel) Seed() uint32 { return k.lay.seed() }

// LayoutVersion is the explicit version folded into Seed.
func (k *Kernel) LayoutVersion() uint32 { return k.lay.version }

// Params returns the layout parameters: element type ("f32" or "qc8w"),
// nr, kr and sr.
func (k *Kernel) Params() (elem string, nr, kr, sr int) {
	return k.lay.elem.String(), k.lay.nr, k.lay.kr, k.lay.sr
}

// ComputePath names the compute path this kernel takes on this machine:
// "avx512f", "avx2-fma" or "go".
func (k *Kernel) ComputePath() string {
	switch k.simd {
	case simdAVX512:
		return "avx512f"
	case simdAVX2:
		return "avx2-fma"
	}
	return "go"
}

// Fingerprint is a hash of the packer's output on fixed pseudo-random input.
// It is computed on first use and kept in the Kernel.
func (k *Kernel) Fingerprint() uint64 {
	k.fpOnce.Do(func() { k.fp = fingerprint(k) })
	return k.fp
}

// PackedSize is the number of bytes Pack writes for an N×K weight and its
// bias: round_up(N, nr)/nr panels of biases, padded weights and extras.
// It returns 0 for an invalid shape (N or K not positive, or too large);
// Pack and Compute report those as ErrShape.
func (k *Kernel) PackedSize(n, kdim int) int {
	s, _ := k.lay.packedSize(n, kdim)
	return s
}

// Pack packs w, an N×K row-major weight (output channel major, "goi"), and
// bias (length N, or nil for zeros) into dst. It writes every byte of
// dst[:PackedSize(n, kdim)], padding included, so dst need not be zeroed.
func (k *Kernel) Pack(dst []byte, n, kdim int, w, bias []float32) error {
	size, err := k.checkShape("pack", n, kdim)
	if err != nil {
		return err
	}
	if len(w) != n*kdim {
		return k.shapeErr("pack", "len(w)", len(w), n*kdim, ErrShape)
	}
	if bias != nil && len(bias) != n {
		return k.shapeErr("pack", "len(bias)", len(bias), n, ErrShape)
	}
	if err := k.checkPacked("pack", dst, size); err != nil {
		return err
	}
	dst = dst[:size]
	canonical := !k.lay.biasLast && k.lay.pad == 0
	switch {
	case k.lay.elem == elemQC8W && canonical && k.lay.sr == 1:
		return k.packQC8WSR1(dst, n, kdim, w, bias)
	case k.lay.elem == elemQC8W:
		return k.packQC8W(dst, n, kdim, w, bias)
	case canonical && k.lay.kr == 1 && k.lay.sr == 1:
		packF32KR1(dst, k.lay.nr, n, kdim, w, bias, k.simd)
	case canonical && k.lay.sr == 1:
		packF32SR1(dst, k.lay.nr, k.lay.kr, n, kdim, w, bias)
	default:
		k.packF32Generic(dst, n, kdim, w, bias)
	}
	return nil
}

// Compute sets y[M×N] = x[M×K]·Wᵀ + b, reading W and b only from packed,
// which must hold what Pack wrote for the same N and K. M = 0 does nothing.
// It runs on the calling goroutine.
func (k *Kernel) Compute(y, x []float32, m int, packed []byte, n, kdim int) error {
	return k.ComputeWorkers(y, x, m, packed, n, kdim, 1)
}

// ComputeWorkers is Compute split over up to workers goroutines, each
// taking a contiguous range of nr-panels (output channels). Every output is
// summed in the same order whatever the split, so the result is
// bit-identical to Compute's.
func (k *Kernel) ComputeWorkers(y, x []float32, m int, packed []byte, n, kdim, workers int) error {
	size, err := k.checkShape("compute", n, kdim)
	if err != nil {
		return err
	}
	if m < 0 || m > maxDim {
		return k.shapeErr("compute", "m", m, 0, ErrShape)
	}
	if mk, ok := mulInt(m, kdim); !ok || len(x) < mk {
		return k.shapeErr("compute", "len(x)", len(x), mk, ErrShape)
	}
	if mn, ok := mulInt(m, n); !ok || len(y) < mn {
		return k.shapeErr("compute", "len(y)", len(y), mn, ErrShape)
	}
	if err := k.checkPacked("compute", packed, size); err != nil {
		return err
	}
	if m == 0 {
		return nil
	}
	nr := k.lay.nr
	pb := k.lay.panelBytes(kdim)
	panels := size / pb
	workers = max(1, min(workers, panels))
	if workers == 1 {
		k.computePanels(y, n, x, m, packed[:size], n, kdim)
		return nil
	}
	var wg sync.WaitGroup
	for w := range workers {
		p0, p1 := panels*w/workers, panels*(w+1)/workers
		wg.Go(func() {
			k.computePanels(y[p0*nr:], n, x, m, packed[p0*pb:p1*pb], min(n, p1*nr)-p0*nr, kdim)
		})
	}
	wg.Wait()
	return nil
}

// computePanels computes the nc output channels held in packed (whole
// panels) for all m rows, writing row r at y[r*ldy:].
func (k *Kernel) computePanels(y []float32, ldy int, x []float32, m int, packed []byte, nc, kdim int) {
	switch {
	case k.lay.elem == elemQC8W && k.simd != simdNone:
		computeQC8WNR16SIMD(y, ldy, x, m, packed, nc, kdim)
	case k.lay.elem == elemQC8W:
		k.computeQC8W(y, ldy, x, m, packed, nc, kdim)
	case k.simd != simdNone:
		computeF32NR16SIMD(y, ldy, x, m, packed, nc, kdim, k.simd == simdAVX512)
	case k.lay.kr == 1 && k.lay.sr == 1 && !k.lay.biasLast:
		computeF32KR1(y, ldy, x, m, packed, k.lay.nr, nc, kdim)
	case k.lay.sr == 1 && !k.lay.biasLast:
		computeF32SR1(y, ldy, x, m, packed, k.lay.nr, k.lay.kr, nc, kdim)
	default:
		k.computeF32Generic(y, ldy, x, m, packed, nc, kdim)
	}
}

func (k *Kernel) checkShape(op string, n, kdim int) (int, error) {
	if n <= 0 || n > maxDim {
		return 0, k.shapeErr(op, "n", n, 0, ErrShape)
	}
	if kdim <= 0 || kdim > maxDim {
		return 0, k.shapeErr(op, "kdim", kdim, 0, ErrShape)
	}
	size, ok := k.lay.packedSize(n, kdim)
	if !ok {
		return 0, k.shapeErr(op, "n*kdim", n, kdim, ErrShape)
	}
	return size, nil
}

// checkPacked refuses buffers that are short or not 4-byte aligned: floats
// are read in place with unsafe.Slice, and a misaligned view would fault
// under checkptr or on strict-alignment CPUs.
func (k *Kernel) checkPacked(op string, b []byte, size int) error {
	if len(b) < size {
		return k.shapeErr(op, "len(packed)", len(b), size, ErrBufferTooSmall)
	}
	if a := int(uintptrOf(b) % 4); a != 0 {
		return k.shapeErr(op, "packed address mod 4", a, 0, ErrMisaligned)
	}
	return nil
}

func (k *Kernel) shapeErr(op, field string, got, want int, err error) error {
	return &ShapeError{Kernel: k.name, Op: op, Field: field, Got: got, Want: want, Err: err}
}
