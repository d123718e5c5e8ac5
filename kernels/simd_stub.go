//go:build !amd64

package kernels

// haveAVX2FMA is false off amd64: only the pure-Go paths exist.
const haveAVX2FMA = false

func computeF32NR16SIMD(y []float32, ldy int, x []float32, m int, packed []byte, n, kdim int) {
	computeF32KR1(y, ldy, x, m, packed, 16, n, kdim)
}
