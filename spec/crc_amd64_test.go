//go:build amd64

package spec

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// xnmodp is x^n mod the Castagnoli polynomial, bit-reflected as the CRC
// register holds it: x^0 is the top bit, and each step multiplies by x.
func xnmodp(n int) uint32 {
	r := uint32(1) << 31
	for range n {
		r = r>>1 ^ 0x82f63b78&-(r&1)
	}
	return r
}

// TestFoldCRCMatchesCastagnoli checks the folding CRC against
// hash/crc32's at every length up to 3 KiB (each below-256 tail, every
// lane count) and at a v3 index's length, from unaligned starts and
// arbitrary initial CRCs; and the fold constants crc_amd64.s holds
// against their definition. A wrong constant, lane order or tail fold
// fails it.
func TestFoldCRCMatchesCastagnoli(t *testing.T) {
	if !foldCRC {
		t.Skip("no AVX-512 VPCLMULQDQ: updateCRC32C is hash/crc32's")
	}
	require.Equal(t, [6]uint32{0xdcb17aa4, 0xb9e02b86, 0x740eef02, 0x9e4addf8, 0xf20c0dfe, 0x493c7d27},
		[6]uint32{xnmodp(8*256 + 31), xnmodp(8*256 - 33), xnmodp(8*64 + 31), xnmodp(8*64 - 33), xnmodp(8*16 + 31), xnmodp(8*16 - 33)})
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 120<<10)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	check := func(off, n int) {
		b := buf[off : off+n]
		crc := rng.Uint32()
		require.Equal(t, crc32.Update(crc, castagnoli, b), updateCRC32C(crc, b), "offset %d, length %d", off, n)
		if n >= 256 {
			m := n &^ 15
			require.Equal(t, ^crc32.Update(^crc, castagnoli, b[:m]), crc32cFold(crc, &b[0], m), "fold, offset %d, length %d", off, m)
		}
	}
	for n := range 3 << 10 {
		check(rng.IntN(64), n)
	}
	for _, n := range []int{116 << 10, 116<<10 + 15, 118_736} {
		for off := range 64 {
			check(off, n)
		}
	}
}
