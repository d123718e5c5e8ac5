package kernels

import (
	"math"
	"unsafe"
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
func packF32KR1(dst []byte, nr, n, kdim int, w, bias []float32) {
	out := u32s(dst)
	src := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(w))), len(w))
	pf := nr + kdim*nr // floats per panel
	for n0 := 0; n0 < n; n0 += nr {
		panel := out[n0/nr*pf : (n0/nr+1)*pf]
		nb := min(nr, n-n0)
		writeBias(panel[:nr], n0, nb, bias, 0)
		pw := panel[nr:]
		rows := src[n0*kdim : (n0+nb)*kdim]
		switch {
		case nb == 16 && nr == 16:
			transpose16(pw, rows, kdim)
		case nb == 8 && nr == 8:
			transpose8(pw, rows, kdim)
		default:
			for k := 0; k < kdim; k++ {
				o := pw[k*nr : k*nr+nr]
				for j := range o {
					if j < nb {
						o[j] = rows[j*kdim+k]
					} else {
						o[j] = 0
					}
				}
			}
		}
	}
}

// transpose16 writes out[k*16+j] = rows[j*kdim+k] for j < 16. Bounds were
// established by the caller (len(rows) = 16·kdim, len(out) = 16·kdim).
func transpose16(out, rows []uint32, kdim int) {
	_ = out[16*kdim-1]
	_ = rows[16*kdim-1]
	s := unsafe.Pointer(unsafe.SliceData(rows))
	d := unsafe.Pointer(unsafe.SliceData(out))
	rs := uintptr(kdim) * 4
	for k := 0; k < kdim; k++ {
		p := unsafe.Add(s, k*4)
		o := (*[16]uint32)(unsafe.Add(d, k*64))
		o[0] = *(*uint32)(p)
		o[1] = *(*uint32)(unsafe.Add(p, rs))
		o[2] = *(*uint32)(unsafe.Add(p, 2*rs))
		o[3] = *(*uint32)(unsafe.Add(p, 3*rs))
		o[4] = *(*uint32)(unsafe.Add(p, 4*rs))
		o[5] = *(*uint32)(unsafe.Add(p, 5*rs))
		o[6] = *(*uint32)(unsafe.Add(p, 6*rs))
		o[7] = *(*uint32)(unsafe.Add(p, 7*rs))
		o[8] = *(*uint32)(unsafe.Add(p, 8*rs))
		o[9] = *(*uint32)(unsafe.Add(p, 9*rs))
		o[10] = *(*uint32)(unsafe.Add(p, 10*rs))
		o[11] = *(*uint32)(unsafe.Add(p, 11*rs))
		o[12] = *(*uint32)(unsafe.Add(p, 12*rs))
		o[13] = *(*uint32)(unsafe.Add(p, 13*rs))
		o[14] = *(*uint32)(unsafe.Add(p, 14*rs))
		o[15] = *(*uint32)(unsafe.Add(p, 15*rs))
	}
}

// transpose8 is transpose16 for 8 rows.
func transpose8(out, rows []uint32, kdim int) {
	_ = out[8*kdim-1]
	_ = rows[8*kdim-1]
	s := unsafe.Pointer(unsafe.SliceData(rows))
	d := unsafe.Pointer(unsafe.SliceData(out))
	rs := uintptr(kdim) * 4
	for k := 0; k < kdim; k++ {
		p := unsafe.Add(s, k*4)
		o := (*[8]uint32)(unsafe.Add(d, k*32))
		o[0] = *(*uint32)(p)
		o[1] = *(*uint32)(unsafe.Add(p, rs))
		o[2] = *(*uint32)(unsafe.Add(p, 2*rs))
		o[3] = *(*uint32)(unsafe.Add(p, 3*rs))
		o[4] = *(*uint32)(unsafe.Add(p, 4*rs))
		o[5] = *(*uint32)(unsafe.Add(p, 5*rs))
		o[6] = *(*uint32)(unsafe.Add(p, 6*rs))
		o[7] = *(*uint32)(unsafe.Add(p, 7*rs))
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
		pw := unsafe.Slice((*int8)(unsafe.Pointer(&panel[wo])), steps*l.nr*l.kr)
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
