package spec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNameBytes: the name bytes an index can hold bound its name arena. A
// v3 body of minimal entries holds 4 name bytes each (a 2-byte name and its
// padding); a long body no more than count of the longest names (likewise
// in v2); and a small index's arena is one buffer of exactly that bound.
func TestNameBytes(t *testing.T) {
	longest := uint64(2*MaxNameLen + 1)
	for _, tc := range []struct{ body, count, want uint64 }{
		{0, 0, 0},
		{V3MinEntrySize, 1, 4},
		{1024 * V3MinEntrySize, 1024, 4096},
		{V3EntryFixedSize + longest, 1, longest},
		{V3EntryFixedSize + longest - 1, 1, longest - 1},
		{1 << 20, 1, longest},
		{1 << 20, 2, 2 * longest},
	} {
		require.Equal(t, tc.want, v3NameBytes(tc.body, tc.count), "body %d, count %d", tc.body, tc.count)
	}
	for _, tc := range []struct{ indexLen, count, want uint64 }{
		{0, 0, 0},
		{V2EntryFixedSize + 1, 1, 1},
		{V2EntryFixedSize + V2MaxNameLen - 1, 1, V2MaxNameLen - 1},
		{1 << 20, 1, V2MaxNameLen},
		{1 << 20, 3, 3 * V2MaxNameLen},
	} {
		require.Equal(t, tc.want, v2NameBytes(tc.indexLen, tc.count), "v2: index %d, count %d", tc.indexLen, tc.count)
	}
	a := newNameArena(v3NameBytes(1024*V3MinEntrySize, 1024), 0, nil)
	got := AllocatedBytes(func() { a.add([]byte("w\x00")) })
	require.Equal(t, uint64(4096), got, "the first name's buffer")
	got = AllocatedBytes(func() {
		for range 1023 {
			a.add([]byte("w\x00"))
		}
	})
	require.Zero(t, got, "the other 1023 names share it")
}

// TestValidTensorName: a weight or bias name is valid up to MaxNameLen
// bytes inclusive and never holds the separator, which would make the v3
// entry name Weight+NameSeparator+Bias ambiguous.
func TestValidTensorName(t *testing.T) {
	long := make([]byte, MaxNameLen)
	for i := range long {
		long[i] = 'w'
	}
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"", true},
		{"fc1.weight", true},
		{string(long), true},
		{string(long) + "w", false},
		{"fc1" + NameSeparator + "weight", false},
		{NameSeparator, false},
	} {
		require.Equal(t, tc.ok, ValidTensorName(tc.name), "name of %d bytes %q", len(tc.name), tc.name[:min(len(tc.name), 16)])
	}
}
