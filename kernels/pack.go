package kernels

import (
	"math"

	"github.com/xpwc/xpwc/internal/rawmem"
)

// packF32Generic is the reference packer for any nr, kr, sr: a direct form
// of XNNPACK's xnn_pack_f32_gemm_goi_w, except that it writes the padding
// itself (the layout's pad pattern) instead of relying on a pre-filled
// buffer, so packed bytes never depend on what dst held before.
func (k *Kernel) packF32Generic(dst []byte, n, kdim int, w, bias []float32) {
	l := &k.lay
	pb := l.panelBytes(kdim)
	bo, wo, _ := l.offsets(kdim)
	steps := l.kStride(kdim) / l.kr
	for n0 := 0; n0 < n; n0 += l.nr {
		panel := u32s(dst[n0/l.nr*pb : (n0/l.nr+1)*pb])
		writeBias(panel[bo/4:bo/4+l.nr], n0, min(l.nr, n-n0), bias, l.pad)
		pw := panel[wo/4 : wo/4+steps*l.nr*l.kr]
		for s := 0; s < steps; s++ {
			for j := 0; j < l.nr; j++ {
				for kk := 0; kk < l.kr; kk++ {
					slot := (s*l.nr+j)*l.kr + kk
					src := l.sourceK(s, j, kk)
					if n0+j < n && src < kdim {
						pw[slot] = math.Float32bits(w[(n0+j)*kdim+src])
					} else {
						pw[slot] = l.pad
					}
				}
			}
		}
	}
}

// packF32KR1 packs the canonical kr = sr = 1 layout (zero padding, biases
// first): per panel nr biases, then a K×nr transpose of nr weight rows.
// Full panels of 8 and 16 channels take unrolled loops that read nr source
// rows in step and write one contiguous nr-float row per k, which keeps
// packing close to copy bandwidth (see docs/kernels.md).
func packF32KR1(dst []byte, nr, n, kdim int, w, bias []float32, simd simdLevel) {
	out := u32s(dst)
	src := rawmem.Float32Bits(w)
	pf := nr + kdim*nr // floats per panel
	for n0 := 0; n0 < n; n0 += nr {
		panel := out[n0/nr*pf : (n0/nr+1)*pf]
		nb := min(nr, n-n0)
		writeBias(panel[:nr], n0, nb, bias, 0)
		pw := panel[nr:]
		rows := src[n0*kdim : (n0+nb)*kdim]
		switch {
		case nb == 16 && nr == 16:
			transpose16(pw, rows, kdim, simd)
		case nb == 8 && nr == 8:
			transpose8(pw, rows, kdim)
		default:
			// A partial panel: each source row is read once, front to
			// back, into its column of the panel (which fits in L1 for
			// the preset's shapes); the padding channels are zero. The
			// k-outer loop it replaced, with a branch per slot, ran at a
			// tenth of a copy (llama-1184's 8×256 adapters).
			clear(pw)
			for j, r := 0, 0; j < nb; j, r = j+1, r+kdim {
				for k, v := range rows[r : r+kdim] {
					pw[k*nr+j] = v
				}
			}
		}
	}
}

// transpose16 writes out[k*16+j] = rows[j*kdim+k] for j < 16 (len(rows) =
// len(out) = 16·kdim): one contiguous 16-value row of out per k, the 16
// source rows read in step. Plain indexing (a bounds check per load) runs
// at 0.98 of the unsafe pointer walk it replaced (BenchmarkPackVsCopy,
// docs/kernels.md); sixteen row slices would spill.
func transpose16(out, rows []uint32, kdim int, simd simdLevel) {
	n := kdim
	rows = rows[:16*n]
	for k := transpose16SIMD(out, rows, n, simd); k < n; k++ {
		o := (*[16]uint32)(out[k*16 : k*16+16])
		o[0] = rows[k]
		o[1] = rows[1*n+k]
		o[2] = rows[2*n+k]
		o[3] = rows[3*n+k]
		o[4] = rows[4*n+k]
		o[5] = rows[5*n+k]
		o[6] = rows[6*n+k]
		o[7] = rows[7*n+k]
		o[8] = rows[8*n+k]
		o[9] = rows[9*n+k]
		o[10] = rows[10*n+k]
		o[11] = rows[11*n+k]
		o[12] = rows[12*n+k]
		o[13] = rows[13*n+k]
		o[14] = rows[14*n+k]
		o[15] = rows[15*n+k]
	}
}

// transpose8 is transpose16 for 8 rows. Here a slice per source row is
// faster than one slice (the compiler proves every rj[k] in bounds from the
// loop, and eight slices fit in registers, where sixteen spill).
func transpose8(out, rows []uint32, kdim int) {
	n := kdim
	r0 := rows[:n]
	r1 := rows[1*n : 2*n][:n]
	r2 := rows[2*n : 3*n][:n]
	r3 := rows[3*n : 4*n][:n]
	r4 := rows[4*n : 5*n][:n]
	r5 := rows[5*n : 6*n][:n]
	r6 := rows[6*n : 7*n][:n]
	r7 := rows[7*n : 8*n][:n]
	for k := range r0 {
		o := (*[8]uint32)(out[k*8 : k*8+8])
		o[0] = r0[k]
		o[1] = r1[k]
		o[2] = r2[k]
		o[3] = r3[k]
		o[4] = r4[k]
		o[5] = r5[k]
		o[6] = r6[k]
		o[7] = r7[k]
	}
}

// packQC8W quantizes each output channel to int8 with a symmetric scale
// max|w|/127 (XNNPACK's qc8w: per-channel scales, no zero point) and packs
// it like the f32 layout with 1-byte weights; the nr scales go in the
// panel's extra bytes, as XNNPACK's packers leave room for and the operator
// fills in.
func (k *Kernel) packQC8W(dst []byte, n, kdim int, w, bias []float32) error {
	l := &k.lay
	pb := l.panelBytes(kdim)
	bo, wo, eo := l.offsets(kdim)
	steps := l.kStride(kdim) / l.kr
	scales := make([]float32, l.nr)
	padb := int8(uint8(l.pad))
	for n0 := 0; n0 < n; n0 += l.nr {
		panel := dst[n0/l.nr*pb : (n0/l.nr+1)*pb]
		for j := range scales {
			scales[j] = 0
			if n0+j < n {
				s, err := channelScale(w[(n0+j)*kdim : (n0+j+1)*kdim])
				if err != nil {
					return &ShapeError{Kernel: k.name, Op: "pack", Field: "w row", Got: n0 + j, Err: err}
				}
				scales[j] = s
			}
		}
		nb := min(l.nr, n-n0)
		writeBias(u32s(panel[bo:bo+4*l.nr]), n0, nb, bias, l.pad)
		pscale := u32s(panel[eo : eo+4*l.nr])
		for j := range pscale {
			if j < nb {
				pscale[j] = math.Float32bits(scales[j])
			} else {
				pscale[j] = l.pad
			}
		}
		pw := rawmem.Int8s(panel[wo : wo+steps*l.nr*l.kr])
		for s := 0; s < steps; s++ {
			for j := 0; j < l.nr; j++ {
				for kk := 0; kk < l.kr; kk++ {
					slot := (s*l.nr+j)*l.kr + kk
					src := l.sourceK(s, j, kk)
					if n0+j < n && src < kdim {
						pw[slot] = quantize(w[(n0+j)*kdim+src], scales[j])
					} else {
						pw[slot] = padb
					}
				}
			}
		}
	}
	return nil
}

// channelScale is max|w|/127 over one output channel; 0 for an all-zero
// channel (its weights then quantize to 0). For finite floats the order of
// |v| is the order of their bit patterns with the sign cleared, so the
// maximum is taken on integers: no NaN-aware float max in the loop.
func channelScale(row []float32) (float32, error) {
	var maxBits uint32
	for _, v := range row {
		maxBits = max(maxBits, math.Float32bits(v)&0x7fffffff)
	}
	if maxBits >= 0x7f800000 { // an infinity or a NaN
		return 0, ErrNonFinite
	}
	return math.Float32frombits(maxBits) / 127, nil
}

// quantize rounds v/scale to the nearest int8 in [-127, 127], ties to even.
// The division is done in float64 so the result does not depend on whether
// the compiler fuses or reorders float32 operations. |v| ≤ 127·scale up to
// one rounding of scale, so the conversion to int cannot overflow.
func quantize(v, scale float32) int8 {
	if scale == 0 {
		return 0
	}
	q := int(roundEven(float64(v) / float64(scale)))
	return int8(max(-127, min(127, q)))
}

// roundEven is math.RoundToEven for |t| ≤ 2^51: adding and subtracting
// 1.5·2^52 leaves no fraction bits, and IEEE round-to-nearest-even does
// the rounding. Go never reassociates float arithmetic, so this is exact;
// it avoids math.RoundToEven's software path on GOAMD64=v1 (about 3 ns per
// call, most of the quantizing packer's time).
func roundEven(t float64) float64 {
	const magic = 1.5 * (1 << 52)
	return (t + magic) - magic
}
