package kernels

import (
	"math"

	"github.com/xpwc/xpwc/internal/rawmem"
)

// Packed buffers are []byte because they live in file mappings or on the
// heap; these views read and write them as 32-bit values in place. Callers
// check 4-byte alignment first (Kernel.checkPacked).

// f32s views b (4-byte aligned, checked by checkPacked) as float32s.
func f32s(b []byte) []float32 { return rawmem.Float32s(b) }

// u32s views b (4-byte aligned) as uint32s, for writing padding patterns.
func u32s(b []byte) []uint32 { return rawmem.Uint32s(b) }

// u8s views a float32 slice as bytes (used to get 4-byte aligned buffers).
func u8s(f []float32) []byte { return rawmem.Float32Bytes(f) }

func uintptrOf(b []byte) uintptr { return rawmem.Addr(b) }

// mulInt is a·b for non-negative a and b, or ok=false if it overflows int.
func mulInt(a, b int) (int, bool) {
	if a != 0 && b > math.MaxInt/a {
		return 0, false
	}
	return a * b, true
}
