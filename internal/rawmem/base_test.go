package rawmem

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestBaseSlice: Slice(Base(b), len(b)) is b with its capacity clipped;
// nil stays nil and an empty non-nil slice stays non-nil.
func TestBaseSlice(t *testing.T) {
	buf := make([]byte, 8, 16)
	for i := range buf {
		buf[i] = byte(i)
	}
	got := Slice(Base(buf[2:6]), 4)
	require.Equal(t, []byte{2, 3, 4, 5}, got)
	require.Equal(t, 4, cap(got))
	got[0] = 9
	require.Equal(t, byte(9), buf[2], "the same bytes, not a copy")
	require.Nil(t, Slice(Base(nil), 0))
	empty := Slice(Base(buf[3:3]), 0)
	require.NotNil(t, empty)
	require.Empty(t, empty)
}

// TestPointerAt: At(Pointer(b), len(b)) is b with its capacity clipped.
func TestPointerAt(t *testing.T) {
	buf := []byte{1, 2, 3, 4}
	got := At(Pointer(buf[1:]), 2)
	require.Equal(t, []byte{2, 3}, got)
	require.Equal(t, 2, cap(got))
	require.Nil(t, Pointer(nil))
}

// TestRegion: Region is where s's elements lie, whatever their type: the
// address of s[0] and len(s) times the element's size; an empty s gives
// nothing to act on.
func TestRegion(t *testing.T) {
	type pair struct {
		p *int
		n int32
	}
	s := make([]pair, 5)
	// Addresses taken together: s may live on a stack that moves.
	addr, n := Region(s[1:4])
	at1, at4 := uintptr(unsafe.Pointer(&s[1])), uintptr(unsafe.Pointer(&s[4]))
	require.Equal(t, at1, addr)
	require.Equal(t, 3*int(unsafe.Sizeof(pair{})), n)
	require.Equal(t, at4, addr+uintptr(n), "the range ends where s[4] starts")
	addr, n = Region(s[2:2])
	require.Zero(t, addr)
	require.Zero(t, n)
}
