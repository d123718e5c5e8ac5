package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// u is the unit roundoff of float32.
const u = 1.0 / (1 << 24)

// naiveFC is the reference: y = x·Wᵀ + b in float64 straight from the
// row-major source, plus per-output magnitude Σ|x||w| + |b| for tolerances.
func naiveFC(x []float32, m int, w, b []float32, n, kdim int) (y, mag []float64) {
	y = make([]float64, m*n)
	mag = make([]float64, m*n)
	for r := 0; r < m; r++ {
		for j := 0; j < n; j++ {
			var s, a float64
			for k := 0; k < kdim; k++ {
				p := float64(x[r*kdim+k]) * float64(w[j*kdim+k])
				s += p
				a += math.Abs(p)
			}
			if b != nil {
				s += float64(b[j])
				a += math.Abs(float64(b[j]))
			}
			y[r*n+j], mag[r*n+j] = s, a
		}
	}
	return y, mag
}

// f32Tol bounds the error of a float32 dot product of length K plus a bias
// against the exact value: the classic γ_(K+1)·Σ|x||w| bound, doubled so it
// covers both fused (FMA) and separate multiply-add rounding, whichever order
// the kernel sums in.
func f32Tol(kdim int, mag float64) float64 {
	return 2*float64(kdim+2)*u*mag + 1e-37
}

// refQuantize is the test's own statement of qc8w quantization: symmetric
// per channel, scale = max|w|/127 in float32, q = round-half-even(w/scale).
func refQuantize(w []float32, n, kdim int) (q []int8, scales []float32) {
	q = make([]int8, n*kdim)
	scales = make([]float32, n)
	for j := 0; j < n; j++ {
		var mx float32
		for k := 0; k < kdim; k++ {
			mx = max(mx, float32(math.Abs(float64(w[j*kdim+k]))))
		}
		scales[j] = mx / 127
		if mx == 0 {
			continue
		}
		for k := 0; k < kdim; k++ {
			v := math.RoundToEven(float64(w[j*kdim+k]) / float64(scales[j]))
			q[j*kdim+k] = int8(math.Max(-127, math.Min(127, v)))
		}
	}
	return q, scales
}

// xnnpackPort is a literal port of XNNPACK's xnn_pack_f32_gemm_goi_w (one
// group), walking the output pointer as the C code does and skipping
// padding slots, into a zeroed buffer. For qc8w it stores refQuantize's
// int8 values and puts the scales in the extra bytes. The kernels' packers
// must produce the same bytes.
func xnnpackPort(l layout, n, kdim int, w, b []float32) []byte {
	size, ok := l.packedSize(n, kdim)
	if !ok {
		panic("bad shape")
	}
	out := make([]byte, size)
	var q []int8
	var scales []float32
	if l.elem == elemQC8W {
		q, scales = refQuantize(w, n, kdim)
	}
	es := l.elem.size()
	skr := l.kr * l.sr
	p := 0
	put32 := func(at int, v float32) {
		bits := math.Float32bits(v)
		out[at], out[at+1], out[at+2], out[at+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	}
	for nbs := 0; nbs < n; nbs += l.nr {
		nbsz := min(n-nbs, l.nr)
		if b != nil {
			for i := 0; i < nbsz; i++ {
				put32(p+4*i, b[nbs+i])
			}
		}
		p += 4 * l.nr
		for kbs := 0; kbs < roundUp(kdim, skr); kbs += l.kr {
			for nbo := 0; nbo < nbsz; nbo++ {
				for kbo := 0; kbo < l.kr; kbo++ {
					kc := kbs/skr*skr + ((kbs + kbo + nbo*l.kr) & (skr - 1))
					if kc < kdim {
						if l.elem == elemQC8W {
							out[p+kbo] = byte(q[(nbs+nbo)*kdim+kc])
						} else {
							put32(p+4*kbo, w[(nbs+nbo)*kdim+kc])
						}
					}
				}
				p += l.kr * es
			}
			p += (l.nr - nbsz) * l.kr * es
		}
		if l.elem == elemQC8W {
			for i := 0; i < nbsz; i++ {
				put32(p+4*i, scales[nbs+i])
			}
		}
		p += l.extraBytes()
	}
	if p != size {
		panic("port walked past the packed size")
	}
	return out
}

// fcCase is one random FC problem.
type fcCase struct {
	m, n, kdim int
	x, w, b    []float32
}

// newCase draws values in [-scale, scale); with probability 1/4 the bias
// is nil, and some weight rows are all zero (a degenerate qc8w scale).
func newCase(rng *rand.Rand, m, n, kdim int) fcCase {
	scale := float32(math.Ldexp(1, rng.IntN(9)-4))
	draw := func(c int) []float32 {
		v := make([]float32, c)
		for i := range v {
			v[i] = (rng.Float32()*2 - 1) * scale
		}
		return v
	}
	c := fcCase{m: m, n: n, kdim: kdim, x: draw(m * kdim), w: draw(n * kdim), b: draw(n)}
	if rng.IntN(4) == 0 {
		c.b = nil
	}
	if n > 2 && rng.IntN(3) == 0 {
		clear(c.w[kdim : 2*kdim])
	}
	return c
}

// alignedBytes returns a zeroed, 64-byte aligned buffer of size bytes, as
// the cache hands out.
func alignedBytes(size int) []byte {
	f := make([]float32, (size+63)/4+16)
	b := u8s(f)
	off := 0
	for (uintptrOf(b)+uintptr(off))%64 != 0 {
		off += 4
	}
	return b[off : off+size : off+size]
}

func packOrFail(t testing.TB, k *Kernel, c fcCase) []byte {
	t.Helper()
	dst := alignedBytes(k.PackedSize(c.n, c.kdim))
	require.NoError(t, k.Pack(dst, c.n, c.kdim, c.w, c.b))
	return dst
}
