#include "textflag.h"

// func nulScan64(p *byte, n int) (first, count int)
//
// The zero bytes among the n (1 to 64) bytes at p: the index of the first
// (64 if none) and how many. The load is masked to the n bytes, so it
// reads, and can fault on, nothing past them.
TEXT ·nulScan64(SB), NOSPLIT, $0-32
	MOVQ  p+0(FP), SI
	MOVQ  n+8(FP), CX
	MOVQ  $-1, AX
	BZHIQ CX, AX, AX
	KMOVQ AX, K1
	VMOVDQU8.Z (SI), K1, Z0
	VPTESTNMB Z0, Z0, K1, K2
	KMOVQ K2, BX
	POPCNTQ BX, DX
	TZCNTQ BX, AX
	VZEROUPPER
	MOVQ  AX, first+16(FP)
	MOVQ  DX, count+24(FP)
	RET
