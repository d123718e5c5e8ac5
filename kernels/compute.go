package kernels

import "github.com/xpwc/xpwc/internal/rawmem"

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
// per panel, start each row from the biases and add x[k]·W[k][0:nr]. Rows
// go four at a time so each weight loaded serves four FMAs' worth of work,
// as in the assembly micro-kernel.
func computeF32KR1(y []float32, ldy int, x []float32, m int, packed []byte, nr, n, kdim int) {
	pf := nr + kdim*nr
	all := f32s(packed)
	accs := make([]float32, 4*nr)
	a0, a1, a2, a3 := accs[:nr], accs[nr:2*nr], accs[2*nr:3*nr], accs[3*nr:]
	for n0 := 0; n0 < n; n0 += nr {
		panel := all[n0/nr*pf : (n0/nr+1)*pf]
		pw := panel[nr:]
		nb := min(nr, n-n0)
		r := 0
		for ; r+4 <= m; r += 4 {
			x0 := x[r*kdim : (r+1)*kdim]
			x1 := x[(r+1)*kdim : (r+2)*kdim]
			x2 := x[(r+2)*kdim : (r+3)*kdim]
			x3 := x[(r+3)*kdim : (r+4)*kdim]
			for _, a := range [][]float32{a0, a1, a2, a3} {
				copy(a, panel[:nr])
			}
			for kk := range x0 {
				v0, v1, v2, v3 := x0[kk], x1[kk], x2[kk], x3[kk]
				wk := pw[kk*nr : kk*nr+nr]
				b0, b1, b2, b3 := a0[:len(wk)], a1[:len(wk)], a2[:len(wk)], a3[:len(wk)]
				for j, w := range wk {
					b0[j] += v0 * w
					b1[j] += v1 * w
					b2[j] += v2 * w
					b3[j] += v3 * w
				}
			}
			for i, a := range [][]float32{a0, a1, a2, a3} {
				copy(y[(r+i)*ldy+n0:(r+i)*ldy+n0+nb], a[:nb])
			}
		}
		for ; r < m; r++ {
			xr := x[r*kdim : (r+1)*kdim]
			copy(a0, panel[:nr])
			for kk, xv := range xr {
				wk := pw[kk*nr : kk*nr+nr]
				b0 := a0[:len(wk)]
				for j, w := range wk {
					b0[j] += xv * w
				}
			}
			copy(y[r*ldy+n0:r*ldy+n0+nb], a0[:nb])
		}
	}
}

// computeF32SR1 is the pure-Go path for sr = 1 and kr > 1: channel j's
// K-step s holds x-indices s·kr … s·kr+kr-1, so each step is nr short dot
// products against one kr-slice of x, with no per-slot index arithmetic.
func computeF32SR1(y []float32, ldy int, x []float32, m int, packed []byte, nr, kr, n, kdim int) {
	ks := roundUp(kdim, kr)
	pf := nr + ks*nr
	all := f32s(packed)
	acc := make([]float32, nr)
	for n0 := 0; n0 < n; n0 += nr {
		panel := all[n0/nr*pf : (n0/nr+1)*pf]
		pw := panel[nr:]
		nb := min(nr, n-n0)
		for r := 0; r < m; r++ {
			xr := x[r*kdim : (r+1)*kdim]
			copy(acc, panel[:nr])
			for s0 := 0; s0 < kdim; s0 += kr {
				xs := xr[s0:min(s0+kr, kdim)]
				ws := pw[s0*nr : s0*nr+nr*kr]
				for j := range acc {
					wj := ws[j*kr : j*kr+len(xs)]
					sum := acc[j]
					for i, xv := range xs {
						sum += xv * wj[i]
					}
					acc[j] = sum
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
		pw := rawmem.Int8s(panel[wo : wo+steps*l.nr*l.kr])
		nb := min(l.nr, n-n0)
		for r := 0; r < m; r++ {
			xr := x[r*kdim : (r+1)*kdim]
			clear(acc)
			if l.sr == 1 {
				// Unshuffled: K-step s of channel j is x[s·kr : s·kr+kr].
				for s0 := 0; s0 < kdim; s0 += l.kr {
					xs := xr[s0:min(s0+l.kr, kdim)]
					ws := pw[s0*l.nr : s0*l.nr+l.nr*l.kr]
					for j := 0; j < nb; j++ {
						wj := ws[j*l.kr : j*l.kr+len(xs)]
						sum := acc[j]
						for i, xv := range xs {
							sum += xv * float32(wj[i])
						}
						acc[j] = sum
					}
				}
			} else {
				for s := 0; s < steps; s++ {
					for j := 0; j < nb; j++ {
						for kk := 0; kk < l.kr; kk++ {
							if src := l.sourceK(s, j, kk); src < kdim {
								acc[j] += xr[src] * float32(pw[(s*l.nr+j)*l.kr+kk])
							}
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
