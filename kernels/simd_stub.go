//go:build !amd64

package kernels

// cpuSIMD is simdNone off amd64: only the pure-Go paths exist.
const cpuSIMD = simdNone

func computeF32NR16SIMD(y []float32, ldy int, x []float32, m int, packed []byte, n, kdim int, _ bool) {
	computeF32KR1(y, ldy, x, m, packed, 16, n, kdim)
}

func computeQC8WNR16SIMD(y []float32, ldy int, x []float32, m int, packed []byte, n, kdim int) {
	panic("unreachable: cpuSIMD is simdNone")
}
