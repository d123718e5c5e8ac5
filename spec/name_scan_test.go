package spec

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSingleNULMatchesIndexByte: the word-wise scan agrees with the plain
// definition for every length up to 80 and NULs (and 0x80/0xFF bytes, which
// fool a carrying zero-byte test) anywhere.
func TestSingleNULMatchesIndexByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	for iter := range 20000 {
		n := rng.IntN(81)
		b := make([]byte, n, n+8)
		for i := range b {
			switch rng.IntN(8) {
			case 0:
				if iter%3 == 0 {
					b[i] = 0
				} else {
					b[i] = 0x80
				}
			case 1:
				b[i] = 0x80
			case 2:
				b[i] = 0xFF
			case 3:
				b[i] = 1
			default:
				b[i] = byte('a' + rng.IntN(26))
			}
		}
		if iter%3 == 1 && n > 0 {
			b[rng.IntN(n)] = 0 // exactly one
		}
		// Bytes past the end (a v3 name is followed by zero padding) must
		// not count.
		b = append(b, 0, 0, 0)[:n]
		wantPos := bytes.IndexByte(b, 0)
		wantOK := wantPos >= 0 && bytes.IndexByte(b[wantPos+1:], 0) < 0
		pos, ok := singleNUL(b)
		require.Equal(t, wantOK, ok, "iteration %d: %q", iter, b)
		if ok {
			require.Equal(t, wantPos, pos, "iteration %d: %q", iter, b)
		}
	}
}
