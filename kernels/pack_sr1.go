package kernels

import (
	"math"

	"github.com/xpwc/xpwc/internal/rawmem"
)

// The packers in this file handle the canonical sr = 1 layouts with kr > 1
// (zero padding, biases first). Without shuffling, channel j's K-step s is
// simply row[s·kr : s·kr+kr], so each source row is read once, front to
// back, and copied kr elements at a time; the generic packer's per-slot
// index arithmetic made them 5-10× slower.

// packF32SR1 packs f32 weights for sr = 1 and any kr.
func packF32SR1(dst []byte, nr, kr, n, kdim int, w, bias []float32) {
	out := u32s(dst)
	src := rawmem.Float32Bits(w)
	ks := roundUp(kdim, kr)
	full := kdim / kr * kr // K elements in complete kr groups
	pf := nr + ks*nr
	for n0 := 0; n0 < n; n0 += nr {
		panel := out[n0/nr*pf : (n0/nr+1)*pf]
		nb := min(nr, n-n0)
		writeBias(panel[:nr], n0, nb, bias, 0)
		pw := panel[nr:]
		if nb < nr || full < kdim || ks > kdim {
			clear(pw) // padding slots (missing channels, K tail) are zero
		}
		if nb == nr && kr == 4 {
			// Full panel: K-step outer, channel inner, so the writes are
			// sequential and the nr source rows are read in step, as in
			// transpose16.
			rows := src[n0*kdim : (n0+nr)*kdim]
			for s := 0; s*4 < full; s++ {
				o := pw[s*nr*4 : (s+1)*nr*4]
				for j := 0; j < nr; j++ {
					*(*[4]uint32)(o[j*4 : j*4+4]) = *(*[4]uint32)(rows[j*kdim+s*4 : j*kdim+s*4+4])
				}
			}
		} else {
			for j := 0; j < nb; j++ {
				row := src[(n0+j)*kdim : (n0+j+1)*kdim]
				for s := 0; s*kr < full; s++ {
					o := (s*nr + j) * kr
					copy(pw[o:o+kr], row[s*kr:s*kr+kr])
				}
			}
		}
		if full < kdim {
			for j := 0; j < nb; j++ {
				row := src[(n0+j)*kdim : (n0+j+1)*kdim]
				o := (full/kr*nr + j) * kr
				copy(pw[o:o+kdim-full], row[full:])
			}
		}
	}
}

// packQC8WSR1 quantizes and packs for sr = 1 and any kr; see packQC8W for
// the quantization and the panel layout.
func (k *Kernel) packQC8WSR1(dst []byte, n, kdim int, w, bias []float32) error {
	l := &k.lay
	nr, kr := l.nr, l.kr
	pb := l.panelBytes(kdim)
	bo, wo, eo := l.offsets(kdim)
	ks := l.kStride(kdim)
	for n0 := 0; n0 < n; n0 += nr {
		panel := dst[n0/nr*pb : (n0/nr+1)*pb]
		nb := min(nr, n-n0)
		writeBias(u32s(panel[bo:bo+4*nr]), n0, nb, bias, 0)
		pscale := u32s(panel[eo : eo+4*nr])
		pw := rawmem.Int8s(panel[wo : wo+ks*nr])
		if nb < nr || ks > kdim {
			clear(pw)
		}
		for j := 0; j < nr; j++ {
			if j >= nb {
				pscale[j] = 0
				continue
			}
			row := w[(n0+j)*kdim : (n0+j+1)*kdim]
			scale, err := channelScale(row)
			if err != nil {
				return &ShapeError{Kernel: k.name, Op: "pack", Field: "w row", Got: n0 + j, Err: err}
			}
			pscale[j] = math.Float32bits(scale)
			for s0 := 0; s0 < kdim; s0 += kr {
				o := (s0/kr*nr + j) * kr
				for kk, v := range row[s0:min(s0+kr, kdim)] {
					pw[o+kk] = quantize(v, scale)
				}
			}
		}
	}
	return nil
}

// writeBias fills a panel's nr bias slots: the nb real channels from bias
// (zeros when bias is nil), then pad for the padding channels (0 in the
// canonical layouts, the layout's pad pattern in the others).
func writeBias(pbias []uint32, n0, nb int, bias []float32, pad uint32) {
	if nb == len(pbias) && bias != nil {
		copy(pbias, rawmem.Float32Bits(bias[n0:n0+nb]))
		return
	}
	for j := range pbias {
		switch {
		case j >= nb:
			pbias[j] = pad
		case bias != nil:
			pbias[j] = math.Float32bits(bias[n0+j])
		default:
			pbias[j] = 0
		}
	}
}
