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

// COLUMNS4AVX512 gathers, from the 4×4-dword-transposed rows lo0/hi0
// (rows 0..7) and lo1/hi1 (rows 8..15), the 16 rows of columns q, q+4, q+8
// and q+12 and stores them at out, out + 512, out + 256 and out + 768.
// Clobbers Z16..Z23.
#define COLUMNS4AVX512(lo0, hi0, lo1, hi1, out) \
	VSHUFI32X4 $0x88, hi0, lo0, Z16; \
	VSHUFI32X4 $0xDD, hi0, lo0, Z17; \
	VSHUFI32X4 $0x88, hi1, lo1, Z18; \
	VSHUFI32X4 $0xDD, hi1, lo1, Z19; \
	VSHUFI32X4 $0x88, Z18, Z16, Z20; \
	VSHUFI32X4 $0xDD, Z18, Z16, Z21; \
	VSHUFI32X4 $0x88, Z19, Z17, Z22; \
	VSHUFI32X4 $0xDD, Z19, Z17, Z23; \
	VMOVDQU32 Z20, 0(out); \
	VMOVDQU32 Z21, 512(out); \
	VMOVDQU32 Z22, 256(out); \
	VMOVDQU32 Z23, 768(out)

// PREFETCH8LINES asks for the 8 cache lines (512 bytes) at off(p).
#define PREFETCH8LINES(off, p) \
	PREFETCHT0 off(p); \
	PREFETCHT0 off+64(p); \
	PREFETCHT0 off+128(p); \
	PREFETCHT0 off+192(p); \
	PREFETCHT0 off+256(p); \
	PREFETCHT0 off+320(p); \
	PREFETCHT0 off+384(p); \
	PREFETCHT0 off+448(p)

// PREFETCH16LINES asks for the 16 cache lines (1 KiB) at p. A panel's 16
// source rows are contiguous, so the tile loops fetch the next panel's
// source (which starts at row 16) linearly, 1 KiB per 16x16 tile, as much
// as a tile reads: rows of a few KiB each end before the hardware's
// stream prefetchers catch up with sixteen of them. A prefetch past the
// last panel is dropped, never a fault.
#define PREFETCH16LINES(p) \
	PREFETCH8LINES(0, p); \
	PREFETCH8LINES(512, p)

// func transpose16x16avx512(out, rows *uint32, stride, blocks int)
//
// For each of blocks 16-wide column blocks b: out[(16b+k)·16 + j] =
// rows[j·stride/4 + 16b + k] for j, k < 16, stride the byte distance of two
// source rows. The 16×16 tile is loaded as 16 rows (Z0..Z15), transposed in
// registers in four shuffle stages (dword and qword unpacks within 128-bit
// lanes, then two rounds of 128-bit lane shuffles) and stored as 16
// contiguous 64-byte output rows: 16 loads, 64 shuffles and 16 stores per
// KiB, where the Go loop needs a load and a store per float.
TEXT ·transpose16x16avx512(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ rows+8(FP), R8
	MOVQ stride+16(FP), BX
	MOVQ blocks+24(FP), DX
	LEAQ (BX)(BX*2), CX      // 3·stride
	LEAQ (R8)(BX*4), R9      // row 4
	LEAQ (R9)(BX*4), R10     // row 8
	LEAQ (R10)(BX*4), R11    // row 12
	LEAQ (R11)(BX*4), R12    // row 16: the next panel's source
	TESTQ DX, DX
	JLE done

loop:
	PREFETCH16LINES(R12)
	VMOVDQU32 (R8), Z0
	VMOVDQU32 (R8)(BX*1), Z1
	VMOVDQU32 (R8)(BX*2), Z2
	VMOVDQU32 (R8)(CX*1), Z3
	VMOVDQU32 (R9), Z4
	VMOVDQU32 (R9)(BX*1), Z5
	VMOVDQU32 (R9)(BX*2), Z6
	VMOVDQU32 (R9)(CX*1), Z7
	VMOVDQU32 (R10), Z8
	VMOVDQU32 (R10)(BX*1), Z9
	VMOVDQU32 (R10)(BX*2), Z10
	VMOVDQU32 (R10)(CX*1), Z11
	VMOVDQU32 (R11), Z12
	VMOVDQU32 (R11)(BX*1), Z13
	VMOVDQU32 (R11)(BX*2), Z14
	VMOVDQU32 (R11)(CX*1), Z15
	// t(2i) = lo32(r(2i), r(2i+1)), t(2i+1) = hi32(...), t in Z16..Z31
	VPUNPCKLDQ Z1, Z0, Z16
	VPUNPCKHDQ Z1, Z0, Z17
	VPUNPCKLDQ Z3, Z2, Z18
	VPUNPCKHDQ Z3, Z2, Z19
	VPUNPCKLDQ Z5, Z4, Z20
	VPUNPCKHDQ Z5, Z4, Z21
	VPUNPCKLDQ Z7, Z6, Z22
	VPUNPCKHDQ Z7, Z6, Z23
	VPUNPCKLDQ Z9, Z8, Z24
	VPUNPCKHDQ Z9, Z8, Z25
	VPUNPCKLDQ Z11, Z10, Z26
	VPUNPCKHDQ Z11, Z10, Z27
	VPUNPCKLDQ Z13, Z12, Z28
	VPUNPCKHDQ Z13, Z12, Z29
	VPUNPCKLDQ Z15, Z14, Z30
	VPUNPCKHDQ Z15, Z14, Z31
	// u(4g+q): rows 4g..4g+3 of columns k ≡ q (mod 4), one k per lane
	VPUNPCKLQDQ Z18, Z16, Z0
	VPUNPCKHQDQ Z18, Z16, Z1
	VPUNPCKLQDQ Z19, Z17, Z2
	VPUNPCKHQDQ Z19, Z17, Z3
	VPUNPCKLQDQ Z22, Z20, Z4
	VPUNPCKHQDQ Z22, Z20, Z5
	VPUNPCKLQDQ Z23, Z21, Z6
	VPUNPCKHQDQ Z23, Z21, Z7
	VPUNPCKLQDQ Z26, Z24, Z8
	VPUNPCKHQDQ Z26, Z24, Z9
	VPUNPCKLQDQ Z27, Z25, Z10
	VPUNPCKHQDQ Z27, Z25, Z11
	VPUNPCKLQDQ Z30, Z28, Z12
	VPUNPCKHQDQ Z30, Z28, Z13
	VPUNPCKLQDQ Z31, Z29, Z14
	VPUNPCKHQDQ Z31, Z29, Z15
	// per q: columns q, q+4, q+8 and q+12, all 16 rows each
	COLUMNS4AVX512(Z0, Z4, Z8, Z12, DI)
	LEAQ 64(DI), SI
	COLUMNS4AVX512(Z1, Z5, Z9, Z13, SI)
	LEAQ 128(DI), SI
	COLUMNS4AVX512(Z2, Z6, Z10, Z14, SI)
	LEAQ 192(DI), SI
	COLUMNS4AVX512(Z3, Z7, Z11, Z15, SI)
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	ADDQ $1024, R12
	ADDQ $1024, DI
	DECQ DX
	JNZ loop

done:
	VZEROUPPER
	RET

// TRANSPOSE8X8AVX2 transposes the 8×8 dword tile whose rows 0..3 start at
// lo and 4..7 at hi (row stride BX, 3·stride in CX) and stores transposed
// rows j = 0..3 at out + 64j and j = 4..7 at out + 256 + 64(j-4): 32 bytes
// of each of the 8 output rows 8b..8b+7, which are 64 bytes apart. Clobbers
// Y0..Y15.
#define TRANSPOSE8X8AVX2(lo, hi, out) \
	VMOVDQU (lo), Y0; \
	VMOVDQU (lo)(BX*1), Y1; \
	VMOVDQU (lo)(BX*2), Y2; \
	VMOVDQU (lo)(CX*1), Y3; \
	VMOVDQU (hi), Y4; \
	VMOVDQU (hi)(BX*1), Y5; \
	VMOVDQU (hi)(BX*2), Y6; \
	VMOVDQU (hi)(CX*1), Y7; \
	VPUNPCKLDQ Y1, Y0, Y8; \
	VPUNPCKHDQ Y1, Y0, Y9; \
	VPUNPCKLDQ Y3, Y2, Y10; \
	VPUNPCKHDQ Y3, Y2, Y11; \
	VPUNPCKLDQ Y5, Y4, Y12; \
	VPUNPCKHDQ Y5, Y4, Y13; \
	VPUNPCKLDQ Y7, Y6, Y14; \
	VPUNPCKHDQ Y7, Y6, Y15; \
	VPUNPCKLQDQ Y10, Y8, Y0; \
	VPUNPCKHQDQ Y10, Y8, Y1; \
	VPUNPCKLQDQ Y11, Y9, Y2; \
	VPUNPCKHQDQ Y11, Y9, Y3; \
	VPUNPCKLQDQ Y14, Y12, Y4; \
	VPUNPCKHQDQ Y14, Y12, Y5; \
	VPUNPCKLQDQ Y15, Y13, Y6; \
	VPUNPCKHQDQ Y15, Y13, Y7; \
	VPERM2I128 $0x20, Y4, Y0, Y8; \
	VPERM2I128 $0x31, Y4, Y0, Y9; \
	VMOVDQU Y8, 0(out); \
	VMOVDQU Y9, 256(out); \
	VPERM2I128 $0x20, Y5, Y1, Y8; \
	VPERM2I128 $0x31, Y5, Y1, Y9; \
	VMOVDQU Y8, 64(out); \
	VMOVDQU Y9, 320(out); \
	VPERM2I128 $0x20, Y6, Y2, Y8; \
	VPERM2I128 $0x31, Y6, Y2, Y9; \
	VMOVDQU Y8, 128(out); \
	VMOVDQU Y9, 384(out); \
	VPERM2I128 $0x20, Y7, Y3, Y8; \
	VPERM2I128 $0x31, Y7, Y3, Y9; \
	VMOVDQU Y8, 192(out); \
	VMOVDQU Y9, 448(out)

// func transpose8x8avx2(out, rows *uint32, stride, blocks int)
//
// transpose16x16avx512 for AVX2: per block b of 8 columns, rows 0..7 and
// then rows 8..15 are loaded (Y0..Y7), transposed as an 8×8 tile (dword and
// qword unpacks within 128-bit lanes, then 128-bit lane permutes) and
// stored as the first and second half of the 8 output rows 8b..8b+7.
TEXT ·transpose8x8avx2(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ rows+8(FP), R8
	MOVQ stride+16(FP), BX
	MOVQ blocks+24(FP), DX
	LEAQ (BX)(BX*2), CX      // 3·stride
	LEAQ (R8)(BX*4), R9      // row 4
	LEAQ (R9)(BX*4), R10     // row 8
	LEAQ (R10)(BX*4), R11    // row 12
	LEAQ (R11)(BX*4), R12    // row 16: the next panel's source
	TESTQ DX, DX
	JLE done

loop:
	PREFETCH8LINES(0, R12) // 512 bytes per 8-column block, as the block reads
	// rows 0..7, then rows 8..15 into the second half of each output row
	TRANSPOSE8X8AVX2(R8, R9, DI)
	LEAQ 32(DI), SI
	TRANSPOSE8X8AVX2(R10, R11, SI)
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $512, R12
	ADDQ $512, DI
	DECQ DX
	JNZ loop

done:
	VZEROUPPER
	RET
