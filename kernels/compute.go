package kernels

import "unsafe"

// computeF32Generic reads any f32 layout slot by slot through sourceK. It
// is the pure-Go path of the kr > 1 and sr > 1 kernels and of test-only
// layouts.
func (k *Kernel) computeF32Generic(y []float32, ldy int, x []float32, m int, packed []byte, n, kdim int) {
	l := &k.lay
	pb := l.panelBytes(kdim)
	bo, wo, _ := l.offsets(kdim)
	steps := l.kStride(kdim) / l.kr
	acc := make([]float32, l.nr)
	for n0 := 0; n0 < n; n0 += l.nr {
		panel := f32s(packed[n0/l.nr*pb : (n0/l.nr+1)*pb])
		pbias := panel[bo/4 : bo/4+l.nr]
		pw := panel[wo/4 : wo/4+steps*l.nr*l.kr]
		nb := min(l.nr, n-n0)
		for r := 0; r < m; r++ {
			xr := x[r*kdim : (r+1)*kdim]
			copy(acc, pbias)
			for s := 0; s < steps; s++ {
				for j := 0; j < nb; j++ {
					for kk := 0; kk < l.kr; kk++ {
						if src := l.sourceK(s, j, kk); src < kdim {
							acc[j] += xr[src] * pw[(s*l.nr+j)*l.kr+kk]
						}
					}
				}
			}
			copy(y[r*ldy+n0:r*ldy+n0+nb], acc[:nb])
		}
	}
}

// computeF32KR1 is the pure-Go path for the canonical kr = sr = 1 layout:
// per panel and row, start from the biases and add x[k]·W[k][0:nr].
func computeF32KR1(y []float32, ldy int, x []float32, m int, packed []byte, nr, n, kdim int) {
	pf := nr + kdim*nr
	all := f32s(packed)
	acc := make([]float32, nr)
	for n0 := 0; n0 < n; n0 += nr {
		panel := all[n0/nr*pf : (n0/nr+1)*pf]
		pw := panel[nr:]
		nb := min(nr, n-n0)
		for r := 0; r < m; r++ {
			xr := x[r*kdim : (r+1)*kdim]
			copy(acc, panel[:nr])
			for kk, xv := range xr {
				wk := pw[kk*nr : kk*nr+nr]
				for j := range acc {
					acc[j] += xv * wk[j]
				}
			}
			copy(y[r*ldy+n0:r*ldy+n0+nb], acc[:nb])
		}
	}
}

// computeQC8W accumulates x·q in f32 with the int8 weights converted
// exactly to f32, then applies the channel scale once and adds the bias:
// y = scale·Σ x·q + b, the order XNNPACK's f32-qc8w kernels use.
func (k *Kernel) computeQC8W(y []float32, ldy int, x []float32, m int, packed []byte, n, kdim int) {
	l := &k.lay
	pb := l.panelBytes(kdim)
	bo, wo, eo := l.offsets(kdim)
	steps := l.kStride(kdim) / l.kr
	acc := make([]float32, l.nr)
	for n0 := 0; n0 < n; n0 += l.nr {
		panel := packed[n0/l.nr*pb : (n0/l.nr+1)*pb]
		pbias := f32s(panel[bo : bo+4*l.nr])
		pscale := f32s(panel[eo : eo+4*l.nr])
		pw := unsafe.Slice((*int8)(unsafe.Pointer(&panel[wo])), steps*l.nr*l.kr)
		nb := min(l.nr, n-n0)
		for r := 0; r < m; r++ {
			xr := x[r*kdim : (r+1)*kdim]
			clear(acc)
			for s := 0; s < steps; s++ {
				for j := 0; j < nb; j++ {
					for kk := 0; kk < l.kr; kk++ {
						if src := l.sourceK(s, j, kk); src < kdim {
							acc[j] += xr[src] * float32(pw[(s*l.nr+j)*l.kr+kk])
						}
					}
				}
			}
			for j := 0; j < nb; j++ {
				y[r*ldy+n0+j] = acc[j]*pscale[j] + pbias[j]
			}
		}
	}
}
