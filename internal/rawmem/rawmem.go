// Package rawmem is the one place outside the kernels' assembly glue where
// xpwc looks at memory through package unsafe. Each function is a view of
// memory the caller already owns, never a copy, and each has a contract the
// caller must keep; the tests below check the views against copies.
//
// Kept because each saves work on a path whose cost users see (the index
// parse of a warm launch); where a view would not, callers use plain code
// instead.
package rawmem

import "unsafe"

// StringBytes is the bytes of s, without a copy. The caller must not write
// to them: Go strings are immutable, and the bytes may be shared.
func StringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
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
