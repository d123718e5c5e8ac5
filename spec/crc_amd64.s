//go:build amd64

#include "textflag.h"

// Fold constants (x^(8D+31) mod P, x^(8D-33) mod P; P the Castagnoli
// polynomial, bit-reflected) for a fold distance of D = 256, 64 and 16
// bytes: the low qword of a 16-byte lane is multiplied by the first, the
// high qword by the second (TestFoldCRCMatchesCastagnoli derives them).
DATA k256<>+0(SB)/8, $0xdcb17aa4
DATA k256<>+8(SB)/8, $0xb9e02b86
GLOBL k256<>(SB), RODATA|NOPTR, $16
DATA k64<>+0(SB)/8, $0x740eef02
DATA k64<>+8(SB)/8, $0x9e4addf8
GLOBL k64<>(SB), RODATA|NOPTR, $16
DATA k16<>+0(SB)/8, $0xf20c0dfe
DATA k16<>+8(SB)/8, $0x493c7d27
GLOBL k16<>(SB), RODATA|NOPTR, $16

// func crc32cFold(raw uint32, p *byte, n int) uint32
//
// The CRC32C register (not inverted) after n bytes at p, from raw; n is a
// multiple of 16 and at least 256. Four ZMM accumulators hold 256 bytes
// as sixteen 16-byte lanes, each folded 256 bytes forward per step with
// carry-less multiplies (VPCLMULQDQ); then the four are folded into one,
// its four lanes into one, the 16-byte tail folded in, and the last 16
// bytes reduced with two CRC32 instructions.
TEXT ·crc32cFold(SB), NOSPLIT, $0-28
	MOVL raw+0(FP), AX
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX

	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVD     AX, X4
	VPXORQ    Z4, Z0, Z0
	ADDQ      $256, SI
	SUBQ      $256, CX
	VBROADCASTI32X4 k256<>(SB), Z5

loop256:
	CMPQ CX, $256
	JB   fold4
	VPCLMULQDQ $0x00, Z5, Z0, Z6
	VPCLMULQDQ $0x11, Z5, Z0, Z0
	VPTERNLOGD $0x96, (SI), Z6, Z0
	VPCLMULQDQ $0x00, Z5, Z1, Z7
	VPCLMULQDQ $0x11, Z5, Z1, Z1
	VPTERNLOGD $0x96, 64(SI), Z7, Z1
	VPCLMULQDQ $0x00, Z5, Z2, Z8
	VPCLMULQDQ $0x11, Z5, Z2, Z2
	VPTERNLOGD $0x96, 128(SI), Z8, Z2
	VPCLMULQDQ $0x00, Z5, Z3, Z9
	VPCLMULQDQ $0x11, Z5, Z3, Z3
	VPTERNLOGD $0x96, 192(SI), Z9, Z3
	ADDQ       $256, SI
	SUBQ       $256, CX
	JMP        loop256

fold4:
	// Z0 into Z1, Z1 into Z2, Z2 into Z3: 64 bytes apart.
	VBROADCASTI32X4 k64<>(SB), Z5
	VPCLMULQDQ $0x00, Z5, Z0, Z6
	VPCLMULQDQ $0x11, Z5, Z0, Z0
	VPTERNLOGD $0x96, Z6, Z0, Z1
	VPCLMULQDQ $0x00, Z5, Z1, Z6
	VPCLMULQDQ $0x11, Z5, Z1, Z1
	VPTERNLOGD $0x96, Z6, Z1, Z2
	VPCLMULQDQ $0x00, Z5, Z2, Z6
	VPCLMULQDQ $0x11, Z5, Z2, Z2
	VPTERNLOGD $0x96, Z6, Z2, Z3

	// Z3's four lanes into X3 (its first), 16 bytes apart.
	VMOVDQU       k16<>(SB), X5
	VEXTRACTI32X4 $1, Z3, X7
	VEXTRACTI32X4 $2, Z3, X8
	VEXTRACTI32X4 $3, Z3, X9
	VPCLMULQDQ    $0x00, X5, X3, X6
	VPCLMULQDQ    $0x11, X5, X3, X3
	VPXOR         X6, X3, X3
	VPXOR         X7, X3, X3
	VPCLMULQDQ    $0x00, X5, X3, X6
	VPCLMULQDQ    $0x11, X5, X3, X3
	VPXOR         X6, X3, X3
	VPXOR         X8, X3, X3
	VPCLMULQDQ    $0x00, X5, X3, X6
	VPCLMULQDQ    $0x11, X5, X3, X3
	VPXOR         X6, X3, X3
	VPXOR         X9, X3, X3

loop16:
	CMPQ       CX, $16
	JB         reduce
	VPCLMULQDQ $0x00, X5, X3, X6
	VPCLMULQDQ $0x11, X5, X3, X3
	VPXOR      X6, X3, X3
	VPXOR      (SI), X3, X3
	ADDQ       $16, SI
	SUBQ       $16, CX
	JMP        loop16

reduce:
	VMOVQ   X3, BX
	VPEXTRQ $1, X3, DX
	XORL    AX, AX
	CRC32Q  BX, AX
	CRC32Q  DX, AX
	VZEROUPPER
	MOVL    AX, ret+24(FP)
	RET
