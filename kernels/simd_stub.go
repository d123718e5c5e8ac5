//go:build !amd64

package kernels

// cpuSIMD is simdNone off amd64: only the pure-Go paths exist.
const cpuSIMD = simdNone

func computeF32NR16SIMD(y []float32, ldy int, x []float32, m int, packed []byte, n, kdim int, _ bool) {
	computeF32KR1(y, ldy, x, m, packed, 16, n, kdim)
}

// computeQC8WNR16SIMD is never selected here (cpuSIMD is simdNone); if it
// were, the pure-Go qc8w path computes the same layout.
func computeQC8WNR16SIMD(y []float32, ldy int, x []float32, m int, packed []byte, n, kdim int) {
	k := newKernel(layout{version: 1, elem: elemQC8W, nr: 16, kr: 1, sr: 1}, withoutSIMD())
	k.computeQC8W(y, ldy, x, m, packed, n, kdim)
}

// transpose16SIMD does nothing off amd64: transpose16's Go loop does every
// column.
func transpose16SIMD(out, rows []uint32, kdim int, level simdLevel) int { return 0 }
