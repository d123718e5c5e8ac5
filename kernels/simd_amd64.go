//go:build amd64

package kernels

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// cpuSIMD is read once at start-up from CPUID; x/sys/cpu also checks that
// the OS saves the YMM and ZMM state. It is never written afterwards.
var cpuSIMD = func() simdLevel {
	switch {
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX512F:
		return simdAVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return simdAVX2
	}
	return simdNone
}()

// gemm4x16 computes four rows of one nr=16 panel: for r in 0..3,
// c_r[0:16] = w[0:16] + Σ_k a_r[k]·w[16+16k : 32+16k]. Rows may alias
// (XNNPACK's trick for M < 4): aliased rows compute and store the same
// values; computeF32NR16SIMD uses gemm1x16 for leftover rows instead.
//
//go:noescape
func gemm4x16(kc int, a0, a1, a2, a3, w, c0, c1, c2, c3 *float32)

// gemm1x16 computes one row of one nr=16 panel, like gemm4x16 with one row.
//
//go:noescape
func gemm1x16(kc int, a, w, c *float32)

// gemm8x16avx512 computes eight rows of one nr=16 panel; row r of x starts
// at a + r·lda bytes and row r of the output at c + r·ldc bytes.
//
//go:noescape
func gemm8x16avx512(kc int, a *float32, lda int, w *float32, c *float32, ldc int)

// computeF32NR16SIMD drives the micro-kernels over the canonical f32 nr16
// layout: blocks of eight rows (AVX-512), then four, then single rows.
// Panels are the outer loop so that one panel (16·K floats) stays in L2
// while all row blocks of x stream past it. A partial last panel is
// computed into a scratch tile, because the micro-kernels always store 16
// columns.
func computeF32NR16SIMD(y []float32, ldy int, x []float32, m int, packed []byte, n, kdim int, avx512 bool) {
	all := f32s(packed)
	pf := 16 + 16*kdim
	var tmp [8][16]float32
	var a, c [4]*float32
	for n0 := 0; n0 < n; n0 += 16 {
		w := &all[n0/16*pf]
		nb := min(16, n-n0)
		r0 := 0
		for ; avx512 && r0+8 <= m; r0 += 8 {
			if nb == 16 {
				gemm8x16avx512(kdim, &x[r0*kdim], 4*kdim, w, &y[r0*ldy+n0], 4*ldy)
				continue
			}
			gemm8x16avx512(kdim, &x[r0*kdim], 4*kdim, w, &tmp[0][0], 64)
			for i := range 8 {
				copy(y[(r0+i)*ldy+n0:(r0+i)*ldy+n0+nb], tmp[i][:nb])
			}
		}
		for ; r0+4 <= m; r0 += 4 {
			for i := range 4 {
				a[i] = &x[(r0+i)*kdim]
				if nb == 16 {
					c[i] = &y[(r0+i)*ldy+n0]
				} else {
					c[i] = &tmp[i][0]
				}
			}
			gemm4x16(kdim, a[0], a[1], a[2], a[3], w, c[0], c[1], c[2], c[3])
			if nb < 16 {
				for i := range 4 {
					copy(y[(r0+i)*ldy+n0:(r0+i)*ldy+n0+nb], tmp[i][:nb])
				}
			}
		}
		// Remaining rows one at a time: XNNPACK aliases them into the 4-row
		// kernel, which costs four rows of FMAs for each; for M = 1 (token
		// generation) that matters.
		for ; r0 < m; r0++ {
			if nb == 16 {
				gemm1x16(kdim, &x[r0*kdim], w, &y[r0*ldy+n0])
			} else {
				gemm1x16(kdim, &x[r0*kdim], w, &tmp[0][0])
				copy(y[r0*ldy+n0:r0*ldy+n0+nb], tmp[0][:nb])
			}
		}
	}
}

// gemmQC8W4x16 computes four rows of Σ_k a_r[k]·q[k][0:16] over one qc8w
// nr=16 kr=1 panel's int8 weights (w points past the biases); the caller
// applies scales and biases.
//
//go:noescape
func gemmQC8W4x16(kc int, a0, a1, a2, a3 *float32, w *int8, c0, c1, c2, c3 *float32)

// gemmQC8W1x16 is gemmQC8W4x16 for one row.
//
//go:noescape
func gemmQC8W1x16(kc int, a *float32, w *int8, c *float32)

// computeQC8WNR16SIMD drives the qc8w micro-kernels over the canonical
// qc8w nr16 kr1 layout (per panel: 16 f32 biases, K×16 int8, 16 f32
// scales). Each tile of accumulators goes through a scratch buffer and is
// finished in Go as y = acc·scale + b, as computeQC8W does.
func computeQC8WNR16SIMD(y []float32, ldy int, x []float32, m int, packed []byte, n, kdim int) {
	pb := 64 + 16*kdim + 64
	var tmp [4][16]float32
	var a [4]*float32
	for n0 := 0; n0 < n; n0 += 16 {
		panel := packed[n0/16*pb : (n0/16+1)*pb]
		bias := f32s(panel[:64])
		w := (*int8)(unsafe.Pointer(&panel[64]))
		scale := f32s(panel[64+16*kdim:])
		nb := min(16, n-n0)
		finish := func(r, i int) {
			out := y[r*ldy+n0 : r*ldy+n0+nb]
			for j := range out {
				out[j] = tmp[i][j]*scale[j] + bias[j]
			}
		}
		r0 := 0
		for ; r0+4 <= m; r0 += 4 {
			for i := range 4 {
				a[i] = &x[(r0+i)*kdim]
			}
			gemmQC8W4x16(kdim, a[0], a[1], a[2], a[3], w, &tmp[0][0], &tmp[1][0], &tmp[2][0], &tmp[3][0])
			for i := range 4 {
				finish(r0+i, i)
			}
		}
		for ; r0 < m; r0++ {
			gemmQC8W1x16(kdim, &x[r0*kdim], w, &tmp[0][0])
			finish(r0, 0)
		}
	}
}

// transpose16x16avx512 transposes blocks 16×16 tiles of float bits: for
// each block b, out[(16b+k)·16+j] = rows[j·stride/4+16b+k], j, k < 16,
// with stride the byte distance between two source rows.
//
//go:noescape
func transpose16x16avx512(out, rows *uint32, stride, blocks int)

// transpose8x8avx2 is transpose16x16avx512 for AVX2, in blocks of 8
// columns (two 8×8 tiles each: rows 0..7 and rows 8..15).
//
//go:noescape
func transpose8x8avx2(out, rows *uint32, stride, blocks int)

// transpose16SIMD does the part of transpose16 the vector unit can at
// level (whole 16-column blocks with AVX-512, 8-column blocks with AVX2)
// and returns the number of columns it did; the caller does the rest. The
// Go loop runs at about a quarter of a copy's bandwidth, one load and one
// store per float, where the register transposes load and store 32 or 64
// bytes at a time (docs/kernels.md).
func transpose16SIMD(out, rows []uint32, kdim int, level simdLevel) int {
	if kdim < 8 || level < simdAVX2 {
		return 0
	}
	_ = out[16*kdim-1]
	_ = rows[16*kdim-1]
	done := 0
	if level >= simdAVX512 && kdim >= 16 {
		transpose16x16avx512(unsafe.SliceData(out), unsafe.SliceData(rows), 4*kdim, kdim/16)
		done = kdim / 16 * 16
	}
	if blocks := (kdim - done) / 8; blocks > 0 {
		transpose8x8avx2(&out[16*done], &rows[done], 4*kdim, blocks)
		done += 8 * blocks
	}
	return done
}
