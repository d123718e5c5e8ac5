// Package rawmem is the one place outside the kernels' assembly glue where
// xpwc looks at memory through package unsafe. Each function is a view of
// memory the caller already owns, never a copy, and each has a contract the
// caller must keep; the tests check the views against copies.
//
// Kept because each saves work on a path whose cost users see (the index
// parse of a warm launch; the kernels' packing and compute, which read and
// write packed weights in place in file mappings); where a view would not,
// callers use plain code instead.
package rawmem

import "unsafe"

// StringBytes is the bytes of s, without a copy. The caller must not write
// to them: Go strings are immutable, and the bytes may be shared.
func StringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// BytesString is b as a string, without a copy. The caller must never write
// to b again (a parser whose buffer is read once and kept for the strings
// cut from it). b must not be empty.
func BytesString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// ExtendString returns the n bytes that start where s starts, as a string,
// without a copy. The caller guarantees that s was cut from a larger
// string holding at least n bytes from s's first byte (a parser that cut
// two adjacent fields out of one buffer can so get both at once), and that
// s is not empty.
func ExtendString(s string, n int) string {
	return unsafe.String(unsafe.StringData(s), n)
}

// Aligned returns n zeroed bytes whose first byte's address is a multiple
// of align (a power of two), cut from a slightly larger allocation: Go has
// no aligned allocation, and packed weights must be 64-byte aligned for
// the kernels that read them (XNNPACK's kPackedAllocationAlignment).
func Aligned(n, align int) []byte {
	b := make([]byte, n+align-1)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	skip := int((uintptr(align) - addr%uintptr(align)) % uintptr(align))
	return b[skip : skip+n : skip+n]
}

// Float32s views b as float32s in place (len(b)/4 of them; a shorter b is
// none). b's first byte must be 4-byte aligned: the kernels check packed
// buffers before viewing them (and mappings and Aligned buffers are).
func Float32s(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// Uint32s views b as uint32s in place, with Float32s's contract.
func Uint32s(b []byte) []uint32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// Int8s views b as int8s in place (any alignment).
func Int8s(b []byte) []int8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

// Float32Bits views f's values as their IEEE-754 bits in place: what
// math.Float32bits gives for each, without a copy.
func Float32Bits(f []float32) []uint32 {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
}

// Float32Bytes views f as its 4·len(f) bytes in place (native byte order),
// which are 4-byte aligned.
func Float32Bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
}

// Addr is the address of b's first element, for alignment checks and as a
// key that something else confirms (impl/cache keys staged buffers by it
// and checks a weak pointer). It is a number, not a reference: it does not
// keep b alive, and Go may not move heap objects today but promises
// nothing.
func Addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// Scalar is the element types Bytes views: fixed-size numbers, no
// pointers, so a byte view hides nothing from the garbage collector.
type Scalar interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Bytes views s as its bytes in memory order (the machine's byte order).
// The view aliases s: it is valid while s is, and writes show through.
func Bytes[T Scalar](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// Base is the address of b's first byte (nil for a nil slice), as a
// pointer that keeps a heap array alive: with the length kept elsewhere it
// stands for b in 8 bytes instead of 24 (Slice gives b back).
func Base(b []byte) *byte { return unsafe.SliceData(b) }

// Slice is the n bytes from p, with capacity n: Slice(Base(b), len(b))
// is b clipped to its length. A nil p gives nil.
func Slice(p *byte, n int) []byte {
	if p == nil {
		return nil
	}
	return unsafe.Slice(p, n)
}

// Pointer is b's first byte as an unsafe.Pointer (nil for a nil slice),
// for a system call that takes an address.
func Pointer(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

// At is the n bytes at p (memory a system call returned, such as a
// mapping), with capacity n.
func At(p unsafe.Pointer, n int) []byte { return unsafe.Slice((*byte)(p), n) }

// Region is the address and byte length of s's elements, for a system
// call about the memory they occupy (madvise). They are numbers, not a
// view: nothing can be written through them and they keep nothing alive,
// so the caller keeps s alive across the call. A goroutine's stack can
// move, so s is heap memory (a large or escaping allocation); Go does not
// move heap objects today.
func Region[T any](s []T) (uintptr, int) {
	if len(s) == 0 {
		return 0, 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(s))), len(s) * int(unsafe.Sizeof(s[0]))
}
