//go:build amd64

#include "textflag.h"

// func gemm4x16(kc int, a0, a1, a2, a3, w, c0, c1, c2, c3 *float32)
//
// Y0..Y7 hold the 4×16 accumulators (row r in Y(2r), Y(2r+1)), started
// from the panel's 16 biases. Per k: two loads of the 16 weights, one
// broadcast per row, eight FMAs; eight independent chains cover the FMA
// latency at two FMAs per cycle.
TEXT ·gemm4x16(SB), NOSPLIT, $0-80
	MOVQ kc+0(FP), CX
	MOVQ a0+8(FP), R8
	MOVQ a1+16(FP), R9
	MOVQ a2+24(FP), R10
	MOVQ a3+32(FP), R11
	MOVQ w+40(FP), SI

	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y1, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y1, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y1, Y7
	ADDQ $64, SI
	XORQ DX, DX
	TESTQ CX, CX
	JLE store

loop:
	VMOVUPS (SI), Y8
	VMOVUPS 32(SI), Y9
	VBROADCASTSS (R8)(DX*4), Y10
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y10, Y1
	VBROADCASTSS (R9)(DX*4), Y11
	VFMADD231PS Y8, Y11, Y2
	VFMADD231PS Y9, Y11, Y3
	VBROADCASTSS (R10)(DX*4), Y12
	VFMADD231PS Y8, Y12, Y4
	VFMADD231PS Y9, Y12, Y5
	VBROADCASTSS (R11)(DX*4), Y13
	VFMADD231PS Y8, Y13, Y6
	VFMADD231PS Y9, Y13, Y7
	ADDQ $64, SI
	INCQ DX
	CMPQ DX, CX
	JLT loop

store:
	MOVQ c0+48(FP), DI
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	MOVQ c1+56(FP), DI
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	MOVQ c2+64(FP), DI
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)
	MOVQ c3+72(FP), DI
	VMOVUPS Y6, (DI)
	VMOVUPS Y7, 32(DI)
	VZEROUPPER
	RET

// func gemm1x16(kc int, a, w, c *float32)
//
// One row of one panel, for M = 1 and the rows left after blocks of four.
// K is unrolled by two into separate accumulators (Y0,Y1 even k; Y2,Y3 odd
// k) so consecutive FMAs do not wait on each other; they are summed at the
// end.
TEXT ·gemm1x16(SB), NOSPLIT, $0-32
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), R8
	MOVQ w+16(FP), SI

	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	ADDQ $64, SI
	XORQ DX, DX
	MOVQ CX, BX
	ANDQ $-2, BX
	JZ tail

pair:
	VBROADCASTSS (R8)(DX*4), Y10
	VBROADCASTSS 4(R8)(DX*4), Y11
	VFMADD231PS (SI), Y10, Y0
	VFMADD231PS 32(SI), Y10, Y1
	VFMADD231PS 64(SI), Y11, Y2
	VFMADD231PS 96(SI), Y11, Y3
	ADDQ $128, SI
	ADDQ $2, DX
	CMPQ DX, BX
	JLT pair

tail:
	CMPQ DX, CX
	JGE done
	VBROADCASTSS (R8)(DX*4), Y10
	VFMADD231PS (SI), Y10, Y0
	VFMADD231PS 32(SI), Y10, Y1

done:
	VADDPS Y2, Y0, Y0
	VADDPS Y3, Y1, Y1
	MOVQ c+24(FP), DI
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VZEROUPPER
	RET

// func gemm8x16avx512(kc int, a *float32, lda int, w *float32, c *float32, ldc int)
//
// Eight rows of one panel with AVX-512: one zmm accumulator per row
// (Z0..Z7, started from the biases); per k one 64-byte weight load and
// eight FMAs whose x operand is an embedded broadcast from memory. Row r of
// x is at a + r·lda, row r of the output at c + r·ldc (strides in bytes).
TEXT ·gemm8x16avx512(SB), NOSPLIT, $0-48
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), R8
	MOVQ lda+16(FP), DX
	MOVQ w+24(FP), SI
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	LEAQ (R10)(DX*1), R11
	LEAQ (R11)(DX*1), R12
	LEAQ (R12)(DX*1), R13
	LEAQ (R13)(DX*1), AX
	LEAQ (AX)(DX*1), BX

	VMOVUPS (SI), Z0
	VMOVAPS Z0, Z1
	VMOVAPS Z0, Z2
	VMOVAPS Z0, Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z0, Z5
	VMOVAPS Z0, Z6
	VMOVAPS Z0, Z7
	ADDQ $64, SI
	XORQ DX, DX
	TESTQ CX, CX
	JLE store8

loop8:
	VMOVUPS (SI), Z8
	VFMADD231PS.BCST (R8)(DX*4), Z8, Z0
	VFMADD231PS.BCST (R9)(DX*4), Z8, Z1
	VFMADD231PS.BCST (R10)(DX*4), Z8, Z2
	VFMADD231PS.BCST (R11)(DX*4), Z8, Z3
	VFMADD231PS.BCST (R12)(DX*4), Z8, Z4
	VFMADD231PS.BCST (R13)(DX*4), Z8, Z5
	VFMADD231PS.BCST (AX)(DX*4), Z8, Z6
	VFMADD231PS.BCST (BX)(DX*4), Z8, Z7
	ADDQ $64, SI
	INCQ DX
	CMPQ DX, CX
	JLT loop8

store8:
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), DX
	VMOVUPS Z0, (DI)
	ADDQ DX, DI
	VMOVUPS Z1, (DI)
	ADDQ DX, DI
	VMOVUPS Z2, (DI)
	ADDQ DX, DI
	VMOVUPS Z3, (DI)
	ADDQ DX, DI
	VMOVUPS Z4, (DI)
	ADDQ DX, DI
	VMOVUPS Z5, (DI)
	ADDQ DX, DI
	VMOVUPS Z6, (DI)
	ADDQ DX, DI
	VMOVUPS Z7, (DI)
	VZEROUPPER
	RET

// func gemmQC8W4x16(kc int, a0, a1, a2, a3 *float32, w *int8, c0, c1, c2, c3 *float32)
//
// qc8w, nr=16, kr=1: four rows of Σ_k a_r[k]·q[k][0:16], with the int8
// weights sign-extended and converted exactly to f32 (16 bytes per k); the
// caller applies the channel scales and biases. Accumulators start at zero.
TEXT ·gemmQC8W4x16(SB), NOSPLIT, $0-80
	MOVQ kc+0(FP), CX
	MOVQ a0+8(FP), R8
	MOVQ a1+16(FP), R9
	MOVQ a2+24(FP), R10
	MOVQ a3+32(FP), R11
	MOVQ w+40(FP), SI

	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ DX, DX
	TESTQ CX, CX
	JLE qstore4

qloop4:
	VPMOVSXBD (SI), Y8
	VPMOVSXBD 8(SI), Y9
	VCVTDQ2PS Y8, Y8
	VCVTDQ2PS Y9, Y9
	VBROADCASTSS (R8)(DX*4), Y10
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y10, Y1
	VBROADCASTSS (R9)(DX*4), Y11
	VFMADD231PS Y8, Y11, Y2
	VFMADD231PS Y9, Y11, Y3
	VBROADCASTSS (R10)(DX*4), Y12
	VFMADD231PS Y8, Y12, Y4
	VFMADD231PS Y9, Y12, Y5
	VBROADCASTSS (R11)(DX*4), Y13
	VFMADD231PS Y8, Y13, Y6
	VFMADD231PS Y9, Y13, Y7
	ADDQ $16, SI
	INCQ DX
	CMPQ DX, CX
	JLT qloop4

qstore4:
	MOVQ c0+48(FP), DI
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	MOVQ c1+56(FP), DI
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	MOVQ c2+64(FP), DI
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)
	MOVQ c3+72(FP), DI
	VMOVUPS Y6, (DI)
	VMOVUPS Y7, 32(DI)
	VZEROUPPER
	RET

// func gemmQC8W1x16(kc int, a *float32, w *int8, c *float32)
//
// One row of gemmQC8W4x16, K unrolled by two into separate accumulators.
TEXT ·gemmQC8W1x16(SB), NOSPLIT, $0-32
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), R8
	MOVQ w+16(FP), SI

	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ DX, DX
	MOVQ CX, BX
	ANDQ $-2, BX
	JZ qtail1

qpair1:
	VPMOVSXBD (SI), Y8
	VPMOVSXBD 8(SI), Y9
	VPMOVSXBD 16(SI), Y12
	VPMOVSXBD 24(SI), Y13
	VCVTDQ2PS Y8, Y8
	VCVTDQ2PS Y9, Y9
	VCVTDQ2PS Y12, Y12
	VCVTDQ2PS Y13, Y13
	VBROADCASTSS (R8)(DX*4), Y10
	VBROADCASTSS 4(R8)(DX*4), Y11
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y10, Y1
	VFMADD231PS Y12, Y11, Y2
	VFMADD231PS Y13, Y11, Y3
	ADDQ $32, SI
	ADDQ $2, DX
	CMPQ DX, BX
	JLT qpair1

qtail1:
	CMPQ DX, CX
	JGE qdone1
	VPMOVSXBD (SI), Y8
	VPMOVSXBD 8(SI), Y9
	VCVTDQ2PS Y8, Y8
	VCVTDQ2PS Y9, Y9
	VBROADCASTSS (R8)(DX*4), Y10
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y10, Y1

qdone1:
	VADDPS Y2, Y0, Y0
	VADDPS Y3, Y1, Y1
	MOVQ c+24(FP), DI
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VZEROUPPER
	RET
