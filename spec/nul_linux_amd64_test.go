package spec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// oneNUL reads nothing past a name: a name that ends where readable memory
// ends (an index at the end of a mapping) is checked without a fault,
// though the masked load is 64 bytes wide.
func TestOneNULReadsNothingPastTheName(t *testing.T) {
	if !nulScan {
		t.Skip("no AVX-512BW: oneNUL is the scan itself")
	}
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, unix.Munmap(mem)) })
	require.NoError(t, unix.Mprotect(mem[page:], unix.PROT_NONE))
	for n := 1; n <= 64; n++ {
		name := mem[page-n : page : page]
		for i := range name {
			name[i] = 'a'
		}
		name[n/2] = 0
		sep, one := oneNUL(name)
		require.Equal(t, n/2, sep, "n %d", n)
		require.True(t, one, "n %d", n)
	}
}
