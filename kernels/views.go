package kernels

import (
	"math"
	"unsafe"
)

// Packed buffers are []byte because they live in file mappings or on the
// heap; these views read and write them as 32-bit values in place. Callers
// check 4-byte alignment first (Kernel.checkPacked).

// f32s views b (4-byte aligned, checked by checkPacked) as float32s.
func f32s(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// u32s views b (4-byte aligned) as uint32s, for writing padding patterns.
func u32s(b []byte) []uint32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// u8s views a float32 slice as bytes (used to get 4-byte aligned buffers).
func u8s(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// mulInt is a·b for non-negative a and b, or ok=false if it overflows int.
func mulInt(a, b int) (int, bool) {
	if a != 0 && b > math.MaxInt/a {
		return 0, false
	}
	return a * b, true
}
