//go:build amd64

package spec

import "golang.org/x/sys/cpu"

// nulScan64 returns the index of the first zero byte among the n bytes at
// p (64 if none) and how many there are; n is 1 to 64 (nul_amd64.s).
//
//go:noescape
func nulScan64(p *byte, n int) (first, count int)

// nulScan says whether nulScan64 can run: a byte-masked load and compare
// (AVX-512BW; x/sys/cpu also checks that the OS saves the ZMM state),
// BZHI for the mask, POPCNT and TZCNT.
var nulScan = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasBMI1 && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT

// oneNUL is oneNULGo for a name of at most 64 bytes (a v3 entry's weight
// and bias names are usually shorter) in one masked compare: a llama-1184
// load validated its names with bytes.IndexByte and hasNUL in about 85
// instructions a name, the largest part of what a v3 decode costs beyond
// a v2 one.
func oneNUL(name []byte) (sep int, one bool) {
	if !nulScan || len(name) == 0 || len(name) > 64 {
		return oneNULGo(name)
	}
	first, count := nulScan64(&name[0], len(name))
	if count == 0 {
		return -1, false
	}
	return first, count == 1
}
