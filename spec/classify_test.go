package spec_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// TestRecognize: cache files of both formats, damaged or not, are
// recognised; a v2 file that a writer died appending to is recognised by
// the footer of its last commit, within the scan limit; anything else is
// foreign.
func TestRecognize(t *testing.T) {
	ws := spectest.Weights(3, 100, 1)
	v2, _ := spectest.BuildV2(4096, ws)
	v3, _ := spectest.BuildV3(4096, ws)
	torn := append(append([]byte(nil), v3...), 1, 2, 3)
	torn[spec.V3SlotSize+40] ^= 0xff // slot 1's CRC no longer matches
	appended := append(append([]byte(nil), v2...), make([]byte, 4096-len(v2)%4096+3*4096)...)
	for i := len(v2) + 100; i < len(appended); i++ {
		appended[i] = byte(i) // data of the append, no footer at the end
	}
	elf := append([]byte("\x7fELF\x02\x01\x01"), bytes.Repeat([]byte{0x90}, 9000)...)
	// A foreign file that happens to contain the footer's last eight bytes
	// with an implausible index_start is still foreign.
	decoy := append(append([]byte(nil), elf...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0)
	decoy = append(decoy, spec.EncodeV2Index(0, nil)[12:]...)
	decoy = append(decoy, bytes.Repeat([]byte{0x90}, 100)...)

	for _, tc := range []struct {
		name string
		file []byte
		scan int64
		want spec.Format
	}{
		{"v2", v2, spec.V2ScanLimit, spec.FormatV2},
		{"v3", v3, spec.V2ScanLimit, spec.FormatV3},
		{"v3 with a torn slot and trailing bytes", torn, spec.V2ScanLimit, spec.FormatV3},
		{"v2 with an append and no new footer", appended, spec.V2ScanLimit, spec.FormatV2},
		{"v2 appended past the scan limit", appended, int64(len(appended) - len(v2)), spec.FormatUnknown},
		{"a program binary", elf, spec.V2ScanLimit, spec.FormatUnknown},
		{"footer bytes inside a foreign file", decoy, spec.V2ScanLimit, spec.FormatUnknown},
		{"a short text file", []byte("hello\n"), spec.V2ScanLimit, spec.FormatUnknown},
		{"v3 cut inside its slot magic", v3[:5], spec.V2ScanLimit, spec.FormatV3},
	} {
		got, err := spec.Recognize(bytes.NewReader(tc.file), int64(len(tc.file)), tc.scan)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
}

// TestRecognizeTornV2Bounds: the footer a dead v2 append leaves behind is
// recognised only when it is plausible, checked at its exact bounds: an
// index of at least one smallest entry (25 bytes, not 24) before it and a
// count of at least one; found anywhere in the scan, including across the
// boundary of two 1 MiB read steps; an empty file and one cut right after
// the v3 slot magic are classified as the magic says.
func TestRecognizeTornV2Bounds(t *testing.T) {
	// torn is page bytes of data, an index of indexLen bytes, a footer
	// declaring count entries, then after appended bytes with no footer.
	torn := func(indexLen int, count uint32, after int) []byte {
		f := bytes.Repeat([]byte{0x90}, 4096+indexLen)
		f = append(f, etFooter(4096, count, spec.V2Magic, 2)...)
		for range after {
			f = append(f, byte(len(f)%251))
		}
		return f
	}
	const step = 1 << 20
	for _, tc := range []struct {
		name string
		file []byte
		want spec.Format
	}{
		{"index of one smallest entry", torn(spec.V2EntryFixedSize+1, 1, 100), spec.FormatV2},
		{"index one byte short of an entry", torn(spec.V2EntryFixedSize, 1, 100), spec.FormatUnknown},
		{"count zero", torn(100, 0, 100), spec.FormatUnknown},
		{"footer a step before the end", torn(100, 1, step+100), spec.FormatV2},
		// The footer's last eight bytes straddle the boundary of the last
		// two read steps: 4 of them in each.
		{"footer across two read steps", torn(100, 1, step-4), spec.FormatV2},
		{"an empty file", nil, spec.FormatUnknown},
		{"v3 cut right after its slot magic", []byte(spec.V3SlotMagic), spec.FormatV3},
		{"seven bytes not a v3 magic", []byte("XPWCSLX"), spec.FormatUnknown},
	} {
		got, err := spec.Recognize(bytes.NewReader(tc.file), int64(len(tc.file)), spec.V2ScanLimit)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}

	// The scan covers the last scan bytes: a footer whose last eight bytes
	// begin exactly there is found, one byte further back it is not.
	f := torn(100, 1, 5000)
	tail := int64(len(f) - 5000 - 8)
	for scan, want := range map[int64]spec.Format{int64(len(f)) - tail: spec.FormatV2, int64(len(f)) - tail - 1: spec.FormatUnknown} {
		got, err := spec.Recognize(bytes.NewReader(f), int64(len(f)), scan)
		require.NoError(t, err)
		require.Equal(t, want, got, "scan %d", scan)
	}
}
