package rawmem

import (
	"testing"

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
