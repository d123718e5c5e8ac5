package kernels

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	ks := r.Kernels()
	require.GreaterOrEqual(t, len(ks), 5)
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Name()
		got, ok := r.Lookup(k.Name())
		require.True(t, ok)
		require.Same(t, k, got)
	}
	require.True(t, sort.StringsAreSorted(names), names)
	require.Equal(t, "f32-goi-nr16", r.Default().Name())
	elem, nr, kr, sr := r.Default().Params()
	require.Equal(t, []any{"f32", 16, 1, 1}, []any{elem, nr, kr, sr})
	_, ok := r.Lookup("f32-goi-nr32")
	require.False(t, ok)

	// Kernels returns a copy: reordering it does not touch the registry.
	ks[0], ks[1] = ks[1], ks[0]
	require.Equal(t, names[0], r.Kernels()[0].Name())
	// Two registries do not share Kernel values (no package-level state).
	require.NotSame(t, r.Default(), NewRegistry().Default())
}

// TestComputePathDispatch: the default kernel takes the best assembly path
// the CPU has, and the test options really cap it, so the property tests
// cover every path this machine can run.
func TestComputePathDispatch(t *testing.T) {
	want := map[simdLevel]string{simdNone: "go", simdAVX2: "avx2-fma", simdAVX512: "avx512f"}[cpuSIMD]
	require.Equal(t, want, NewRegistry().Default().ComputePath())
	require.Equal(t, "go", newRegistry(withoutSIMD()).Default().ComputePath())
	if cpuSIMD >= simdAVX2 {
		require.Equal(t, "avx2-fma", newRegistry(withSIMDAtMost(simdAVX2)).Default().ComputePath())
	}
	for _, k := range NewRegistry().Kernels() {
		switch {
		case k.Name() == "f32-goi-nr16":
		case k.Name() == "qc8w-goi-nr16" && cpuSIMD >= simdAVX2:
			require.Equal(t, "avx2-fma", k.ComputePath(), k.Name())
		default:
			require.Equal(t, "go", k.ComputePath(), k.Name())
		}
	}
	q, _ := newRegistry(withoutSIMD()).Lookup("qc8w-goi-nr16")
	require.Equal(t, "go", q.ComputePath())
}

func TestPackedSize(t *testing.T) {
	r := NewRegistry()
	// XNNPACK's f32 nr16 size for N = K = 1024 (1024 × 1024 weights and 1024 biases, 4 bytes each).
	require.Equal(t, 4_198_400, r.Default().PackedSize(1024, 1024))
	nr8, _ := r.Lookup("f32-goi-nr8")
	require.Equal(t, 2*(8+8*5)*4, nr8.PackedSize(9, 5))
	q, _ := r.Lookup("qc8w-goi-nr16-kr4")
	// 1 panel: 16 f32 biases, round_up(5,4)=8 × 16 int8, 16 f32 scales.
	require.Equal(t, 64+128+64, q.PackedSize(3, 5))
	for _, k := range r.Kernels() {
		for _, bad := range [][2]int{{0, 1}, {1, 0}, {-1, 5}, {5, -1}, {maxDim + 1, 1}, {1, math.MaxInt}} {
			require.Zero(t, k.PackedSize(bad[0], bad[1]), "%s %v", k.Name(), bad)
		}
	}
}

func TestPackErrors(t *testing.T) {
	for _, k := range NewRegistry().Kernels() {
		n, kd := 5, 7
		w := make([]float32, n*kd)
		dst := alignedBytes(k.PackedSize(n, kd) + 8)
		cases := []struct {
			name  string
			err   error
			field string
			call  func() error
		}{
			{"n=0", ErrShape, "n", func() error { return k.Pack(dst, 0, kd, nil, nil) }},
			{"k<0", ErrShape, "kdim", func() error { return k.Pack(dst, n, -3, w, nil) }},
			{"short w", ErrShape, "len(w)", func() error { return k.Pack(dst, n, kd, w[1:], nil) }},
			{"long w", ErrShape, "len(w)", func() error { return k.Pack(dst, n, kd, append(w, 1), nil) }},
			{"short bias", ErrShape, "len(bias)", func() error { return k.Pack(dst, n, kd, w, make([]float32, n-1)) }},
			{"short dst", ErrBufferTooSmall, "len(packed)", func() error {
				return k.Pack(dst[:k.PackedSize(n, kd)-1], n, kd, w, nil)
			}},
			{"misaligned dst", ErrMisaligned, "packed address mod 4", func() error { return k.Pack(dst[1:], n, kd, w, nil) }},
			{"nil dst", ErrBufferTooSmall, "len(packed)", func() error { return k.Pack(nil, n, kd, w, nil) }},
		}
		for _, c := range cases {
			err := c.call()
			require.ErrorIs(t, err, c.err, "%s %s", k.Name(), c.name)
			var se *ShapeError
			require.ErrorAs(t, err, &se)
			require.Equal(t, c.field, se.Field, "%s %s", k.Name(), c.name)
			require.Equal(t, "pack", se.Op)
			require.Equal(t, k.Name(), se.Kernel)
		}
	}
}

func TestQC8WRejectsNonFinite(t *testing.T) {
	k, _ := NewRegistry().Lookup("qc8w-goi-nr16-kr4")
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		w := make([]float32, 3*4)
		w[7] = bad
		err := k.Pack(alignedBytes(k.PackedSize(3, 4)), 3, 4, w, nil)
		require.ErrorIs(t, err, ErrNonFinite)
		var se *ShapeError
		require.ErrorAs(t, err, &se)
		require.Equal(t, 1, se.Got, "row of the bad weight")
	}
}

func TestComputeErrors(t *testing.T) {
	for _, k := range NewRegistry().Kernels() {
		m, n, kd := 2, 5, 7
		c := newCase(rand.New(rand.NewPCG(1, 1)), m, n, kd)
		packed := packOrFail(t, k, c)
		y := make([]float32, m*n)
		cases := []struct {
			name string
			err  error
			call func() error
		}{
			{"m<0", ErrShape, func() error { return k.Compute(y, c.x, -1, packed, n, kd) }},
			{"n=0", ErrShape, func() error { return k.Compute(y, c.x, m, packed, 0, kd) }},
			{"short x", ErrShape, func() error { return k.Compute(y, c.x[:m*kd-1], m, packed, n, kd) }},
			{"short y", ErrShape, func() error { return k.Compute(y[:m*n-1], c.x, m, packed, n, kd) }},
			{"short packed", ErrBufferTooSmall, func() error { return k.Compute(y, c.x, m, packed[:len(packed)-1], n, kd) }},
			{"bigger shape than packed", ErrBufferTooSmall, func() error {
				return k.Compute(make([]float32, m*n*9), make([]float32, m*kd*9), m, packed, n*9, kd*9)
			}},
			{"misaligned packed", ErrMisaligned, func() error {
				b := alignedBytes(len(packed) + 4)[2:]
				return k.Compute(y, c.x, m, b, n, kd)
			}},
		}
		for _, cs := range cases {
			require.ErrorIs(t, cs.call(), cs.err, "%s %s", k.Name(), cs.name)
		}
		// Errors leave y alone; M = 0 is valid and writes nothing.
		sentinel := make([]float32, m*n)
		for i := range sentinel {
			sentinel[i] = 42
		}
		require.NoError(t, k.Compute(sentinel, nil, 0, packed, n, kd))
		require.Equal(t, float32(42), sentinel[0])
	}
}

// TestPackWritesEveryByte: the packed bytes do not depend on what dst held
// before (XNNPACK relies on a memset by the caller; here padding is
// written by the packer, so a reused or mapped buffer packs identically).
func TestPackWritesEveryByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, k := range NewRegistry().Kernels() {
		c := newCase(rng, 0, 19, 11)
		size := k.PackedSize(c.n, c.kdim)
		dirty := alignedBytes(size)
		for i := range dirty {
			dirty[i] = 0xA5
		}
		require.NoError(t, k.Pack(dirty, c.n, c.kdim, c.w, c.b))
		require.True(t, bytes.Equal(packOrFail(t, k, c), dirty), k.Name())
	}
}

// TestPackLeavesBytesBeyondSize: Pack writes exactly PackedSize bytes, so a
// cache may pack into a larger reservation.
func TestPackLeavesBytesBeyondSize(t *testing.T) {
	for _, k := range NewRegistry().Kernels() {
		size := k.PackedSize(3, 3)
		dst := alignedBytes(size + 16)
		for i := range dst {
			dst[i] = 0xEE
		}
		require.NoError(t, k.Pack(dst, 3, 3, make([]float32, 9), nil))
		require.Equal(t, bytes.Repeat([]byte{0xEE}, 16), dst[size:], k.Name())
	}
}

// TestComputeWorkersBitIdentical: splitting the panels over goroutines
// changes nothing in the output bits, for every kernel and compute path,
// with more workers than panels included.
func TestComputeWorkersBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for path, reg := range computePaths(t) {
		for _, k := range reg.Kernels() {
			for _, sh := range [][3]int{{5, 83, 31}, {1, 16, 1}, {7, 200, 64}} {
				c := newCase(rng, sh[0], sh[1], sh[2])
				packed := packOrFail(t, k, c)
				want := make([]float32, c.m*c.n)
				require.NoError(t, k.Compute(want, c.x, c.m, packed, c.n, c.kdim))
				for _, w := range []int{0, 2, 3, 5, 64} {
					got := make([]float32, c.m*c.n)
					require.NoError(t, k.ComputeWorkers(got, c.x, c.m, packed, c.n, c.kdim, w))
					require.Equal(t, want, got, "%s/%s workers=%d shape=%v", path, k.Name(), w, sh)
				}
			}
		}
	}
}

// TestRoundEven: the magic-number rounding agrees with math.RoundToEven on
// the quantizer's whole range, ties included.
func TestRoundEven(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for i := range 200000 {
		v := (rng.Float64()*2 - 1) * 130
		if i%4 == 0 {
			v = math.Round(v*2) / 2 // exact ties
		}
		require.Equal(t, math.RoundToEven(v), roundEven(v), "%v", v)
	}
	for _, v := range []float64{0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, -126.5, 127.49999999999999} {
		require.Equal(t, math.RoundToEven(v), roundEven(v), "%v", v)
	}
}

// TestHostileArgumentsNeverPanic throws random, mostly wrong, arguments at
// Pack and Compute: every call returns nil or one of the typed errors.
func TestHostileArgumentsNeverPanic(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	dim := func() int {
		switch rng.IntN(6) {
		case 0:
			return -rng.IntN(3)
		case 1:
			return math.MaxInt - rng.IntN(3)
		case 2:
			return maxDim + rng.IntN(2)
		default:
			return 1 + rng.IntN(40)
		}
	}
	floats := func(c int) []float32 {
		if c < 0 || c > 1<<12 || rng.IntN(5) == 0 {
			return make([]float32, rng.IntN(50))
		}
		return make([]float32, c)
	}
	for _, k := range NewRegistry().Kernels() {
		for range 3000 {
			n, kd, m := dim(), dim(), dim()
			buf := alignedBytes(64 + rng.IntN(1<<14))
			if rng.IntN(4) == 0 {
				buf = buf[rng.IntN(4):]
			}
			var bias []float32
			if rng.IntN(2) == 0 {
				bias = floats(n)
			}
			for _, err := range []error{
				k.Pack(buf, n, kd, floats(n*kd), bias),
				k.ComputeWorkers(floats(m*n), floats(m*kd), m, buf, n, kd, rng.IntN(4)),
			} {
				if err != nil {
					var se *ShapeError
					require.ErrorAs(t, err, &se, k.Name())
				}
			}
		}
	}
}
