package kernels

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
)

// elemKind is the element type of packed weights.
type elemKind uint8

const (
	elemF32  elemKind = 1 // f32 weights, f32 bias
	elemQC8W elemKind = 2 // int8 weights, f32 bias, f32 per-channel scales
)

func (e elemKind) String() string {
	switch e {
	case elemF32:
		return "f32"
	case elemQC8W:
		return "qc8w"
	}
	return fmt.Sprintf("elem(%d)", uint8(e))
}

// size is the byte size of one packed weight element.
func (e elemKind) size() int {
	if e == elemQC8W {
		return 1
	}
	return 4
}

// maxDim bounds N and K so that every size computed below fits an int even
// on 32-bit platforms' int64 arithmetic; real layers are far smaller.
const maxDim = 1 << 30

// layout describes one packed format. Everything that changes the bytes a
// packer writes must be a field here and part of the seed encoding, or be
// covered by bumping version.
type layout struct {
	// version is bumped whenever the packer's output changes for the same
	// parameters. The golden test pins the fingerprint per version, so a
	// change without a bump fails it.
	version uint32
	elem    elemKind
	nr      int // output channels per panel
	kr      int // consecutive K elements of one channel stored together (power of 2)
	sr      int // shuffle factor (power of 2); 1 means none
	// biasLast puts a panel's biases after its weights. Only test-only
	// variants set it: it exists to prove that a layout change is caught.
	biasLast bool
	// pad is the bit pattern written into padding slots (for int8 slots,
	// its low byte). Built-in kernels use 0, as newer XNNPACK does (some
	// caches fault on unwritten pages, so padding is always written).
	pad uint32
}

// kStride is the number of K elements stored per channel: K rounded up to
// a multiple of kr·sr.
func (l *layout) kStride(kdim int) int { return roundUp(kdim, l.kr*l.sr) }

// extraBytes is the per-panel trailer: qc8w stores nr f32 scales there,
// as XNNPACK's qc8w packers do.
func (l *layout) extraBytes() int {
	if l.elem == elemQC8W {
		return 4 * l.nr
	}
	return 0
}

// panelBytes is the size of one nr-panel for a K of kdim.
func (l *layout) panelBytes(kdim int) int {
	return 4*l.nr + l.kStride(kdim)*l.nr*l.elem.size() + l.extraBytes()
}

// offsets returns where a panel's biases, weights and extras start.
func (l *layout) offsets(kdim int) (bias, weights, extra int) {
	wb := l.kStride(kdim) * l.nr * l.elem.size()
	if l.biasLast {
		return wb, 0, wb + 4*l.nr
	}
	return 0, 4 * l.nr, 4*l.nr + wb
}

// packedSize is the byte size of an N×K weight packed in this layout, or
// ok=false when the shape is invalid.
func (l *layout) packedSize(n, kdim int) (int, bool) {
	if n <= 0 || kdim <= 0 || n > maxDim || kdim > maxDim {
		return 0, false
	}
	// In uint64 so that no intermediate wraps where int is 32 bits; once
	// the total fits an int, so do N·K and every panel offset.
	kstride := (uint64(kdim) + uint64(l.kr*l.sr) - 1) / uint64(l.kr*l.sr) * uint64(l.kr*l.sr)
	panel := 4*uint64(l.nr) + kstride*uint64(l.nr)*uint64(l.elem.size()) + uint64(l.extraBytes())
	panels := (uint64(n) + uint64(l.nr) - 1) / uint64(l.nr)
	hi, lo := bits.Mul64(panels, panel)
	if hi != 0 || lo > math.MaxInt {
		return 0, false
	}
	return int(lo), true
}

// sourceK maps weight slot (kstep s, channel j of the panel, element kk of
// the kr group) to the K index it holds; a result ≥ K is padding. This is
// XNNPACK's xnn_pack_f32_gemm_goi_w index: within each group of kr·sr K
// elements, channel j is rotated by j·kr so that sr-shuffling kernels can
// rotate their activations instead of broadcasting them.
func (l *layout) sourceK(s, j, kk int) int {
	skr := l.kr * l.sr
	start := s * l.kr
	return start&^(skr-1) + (start+kk+j*l.kr)&(skr-1)
}

// seed hashes a canonical little-endian encoding of the layout parameters
// and version. It is independent of pointers, maps and the platform's int
// size, so it is the same in every process (G1, G3).
//
// biasLast and pad are deliberately left out: they stand for the packer
// details a seed cannot see (a changed loop, a changed padding value), so
// the test-only layouts that set them share the canonical layout's seed
// and show that the fingerprint, not the seed, catches such a change.
func (l *layout) seed() uint32 {
	h := fnv.New64a()
	h.Write([]byte("xpwc/kernels/fc-goi\x00"))
	var b [4]byte
	for _, v := range []uint32{
		l.version, uint32(l.elem), uint32(l.nr), uint32(l.kr), uint32(l.sr),
		uint32(l.extraBytes()),
	} {
		binary.LittleEndian.PutUint32(b[:], v)
		h.Write(b[:])
	}
	s := h.Sum64()
	return uint32(s>>32) ^ uint32(s)
}

// name is the registered name; parameters equal to 1 are left out.
func (l *layout) name() string {
	s := fmt.Sprintf("%s-goi-nr%d", l.elem, l.nr)
	if l.kr != 1 {
		s += fmt.Sprintf("-kr%d", l.kr)
	}
	if l.sr != 1 {
		s += fmt.Sprintf("-sr%d", l.sr)
	}
	return s
}

func roundUp(v, m int) int { return (v + m - 1) / m * m }
