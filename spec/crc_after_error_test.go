package spec_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// TestV3ChecksumAfterDecodeErrorFromMemory: an index over 1 MiB with a bad
// entry reports the same error parsed from memory (as a load decodes it
// from a mapping, summing the index at the end) as through a reader: the
// checksum when the bad entry lies within the last MiB, else the entry's
// own error, since checking the checksum would read what the slot
// declares rather than what was decoded (G7).
func TestV3ChecksumAfterDecodeErrorFromMemory(t *testing.T) {
	const page = 4096
	const n = 10000 // 104-byte names: a 1.6 MB index
	es := make([][]byte, n)
	for i := range es {
		es[i] = rawV3Entry(fmt.Sprintf("w%099d\x00b", i), page, 0)
	}
	for _, tc := range []struct {
		at   int
		want error
	}{
		{n - 10, spec.ErrChecksum},
		{5, spec.ErrBadName},
	} {
		good := rawV3Index(n, es...)
		bad := rawV3Index(n, es...)
		// The bad entry's name loses its separator; the slot keeps the
		// good index's CRC.
		pos := 16 + tc.at*len(es[0]) + 52
		bad[pos+100] = 'x'
		f := v3File(1, bad, func(off uint64, _ []byte) []byte {
			return rawSlot(4, page, 1, off, uint64(len(bad)), spec.CRC32C(good))
		})
		_, err := spec.ParseV3(bytes.NewReader(f), int64(len(f)))
		require.ErrorIs(t, err, tc.want, "entry %d, through a reader", tc.at)
		_, memErr := spec.ParseV3(spec.Mapped{ReaderAt: bytes.NewReader(f), Mem: f}, int64(len(f)))
		require.ErrorIs(t, memErr, tc.want, "entry %d, from memory", tc.at)
		require.Equal(t, err.Error(), memErr.Error())
	}
}
