package spec

import (
	"encoding/binary"
	"math/bits"
)

// singleNUL returns the position of the only NUL byte in b, or false when
// b holds none or more than one: the separator check of a v3 entry name
// (SplitName's rule). It scans eight bytes at a time, finding the zero
// bytes of a word exactly with the carry-free test below; a typical 30-70
// byte name is a handful of words, where two bytes.IndexByte calls cost
// more in call overhead than in scanning.
func singleNUL(b []byte) (int, bool) {
	const low7 = 0x7F7F7F7F7F7F7F7F
	// zeros sets the top bit of each byte of w that is zero, and no other:
	// adding low7 to the low seven bits carries into the top bit exactly
	// when those bits are not all zero, and or-ing w adds its own top bit.
	zeros := func(w uint64) uint64 { return ^((w&low7 + low7) | w | low7) }
	first, count := -1, 0
	note := func(z uint64, at int) {
		if z != 0 {
			if first < 0 {
				first = at + bits.TrailingZeros64(z)/8
			}
			count += bits.OnesCount64(z)
		}
	}
	i := 0
	for ; len(b)-i >= 8; i += 8 {
		note(zeros(binary.LittleEndian.Uint64(b[i:])), i)
		if count > 1 {
			return 0, false
		}
	}
	if rest := len(b) - i; rest > 0 {
		if len(b) >= 8 {
			// The last eight bytes, shifted so that only the rest remain.
			z := zeros(binary.LittleEndian.Uint64(b[len(b)-8:])) >> (8 * (8 - rest))
			note(z, i)
		} else {
			for j := i; j < len(b); j++ {
				if b[j] == 0 {
					note(0x80, j)
				}
			}
		}
	}
	return first, count == 1
}
