//go:build amd64

package spec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// oneNUL's masked compare gives what the scan it replaces gives, for every
// length around its 64-byte limit and every placement of none, one or two
// zero bytes, at several alignments, with zero bytes just outside the name
// that a compare reaching past its length would count.
func TestOneNULMatchesTheScan(t *testing.T) {
	if !nulScan {
		t.Skip("no AVX-512BW: oneNUL is the scan itself")
	}
	buf := make([]byte, 256)
	for _, at := range []int{0, 1, 7, 8, 31, 63, 64} {
		for n := 0; n <= 70; n++ {
			name := buf[at : at+n : at+n]
			fill := func() {
				clear(buf)
				for i := range name {
					name[i] = byte('a' + i%26)
				}
			}
			check := func(what string) {
				sep, one := oneNUL(name)
				wsep, wone := oneNULGo(name)
				require.Equal(t, wone, one, "%s: one, n %d at %d", what, n, at)
				require.Equal(t, wsep, sep, "%s: sep, n %d at %d", what, n, at)
			}
			fill()
			check("no NUL")
			for i := range n {
				fill()
				name[i] = 0
				check("one NUL")
				for j := i + 1; j < n; j++ {
					fill()
					name[i], name[j] = 0, 0
					check("two NULs")
				}
			}
		}
	}
}
