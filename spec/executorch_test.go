package spec_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// TestExecuTorchLoad: the verdict of ExecuTorch's loader rules on files
// ParseV2 accepts, on files both reject, and on the files where the two
// differ (docs/format.md lists where ParseV2 is stricter).
func TestExecuTorchLoad(t *testing.T) {
	good, _ := spectest.BuildV2(4096, spectest.Weights(3, 100, 1))
	one := etEntry("w", 0, 8, 0x12345678)
	pr20562 := append(append(make([]byte, 16), one...), 0xAB, 0xCD)
	pr20562 = append(pr20562, etFooter(16, 2, spec.V2Magic, 2)...)
	emptyLast := append(make([]byte, 4096), etEntry("w", 4096, 0, 1)...)
	emptyLast = append(emptyLast, etFooter(4096, 1, spec.V2Magic, 2)...)
	misaligned := append(make([]byte, 64), etEntry("w", 8, 8, 1)...)
	misaligned = append(misaligned, etFooter(64, 1, spec.V2Magic, 2)...)
	overrun := append(make([]byte, 64), etEntry("w", 0, 8, 1)[:10]...)
	overrun = append(overrun, etFooter(64, 1, spec.V2Magic, 2)...)
	// v2file is 64 bytes of data, then idx, then a footer naming count
	// entries at 64.
	v2file := func(count uint32, idx ...[]byte) []byte {
		f := make([]byte, 64)
		for _, b := range idx {
			f = append(f, b...)
		}
		return append(f, etFooter(64, count, spec.V2Magic, 2)...)
	}
	e := etEntry("w", 0, 8, 1) // 25 bytes
	for _, tc := range []struct {
		name    string
		file    []byte
		accepts bool
		entries int
		rule    string
		off     int64
		strict  bool // ParseV2 accepts it too
	}{
		{"valid", good, true, 3, "", 0, true},
		{"1024 bytes of 0xCC", bytes.Repeat([]byte{0xCC}, 1024), false, 0, "magic", 1016, false},
		{"v1 footer", append(make([]byte, 64), etFooter(64, 0, spec.V2Magic, 1)...), false, 0, "version", 80, false},
		{"zero-entry trailer", etFooter(0, 0, spec.V2Magic, 2), false, 0, "index_start < size-20", 0, false},
		{"count larger than the records (#20562)", pr20562, true, 1, "", 0, false},
		{"empty entry at index_start", emptyLast, false, 0, "file_offset < index_start and data_size <= index_start - file_offset", 4096 + 5, false},
		{"misaligned offset", misaligned, true, 1, "", 0, false},
		{"record past the footer", overrun, false, 0, "entry inside the index", 64, false},
		// The bounds of each rule, one byte either side.
		{"19 bytes", make([]byte, 19), false, 0, "size < 20", 0, false},
		{"a footer alone", etFooter(0, 1, spec.V2Magic, 2), false, 0, "index_start < size-20", 0, false},
		{"three bytes after the last record", v2file(2, e, []byte{1, 2, 3}), true, 1, "", 0, false},
		{"four bytes after the last record", v2file(2, e, []byte{1, 2, 3, 4}), false, 0, "entry inside the index", 64 + 25, false},
		{"a record ending at the footer", v2file(1, e), true, 1, "", 0, true},
		{"a record one byte past the footer", v2file(1, e[:24]), false, 0, "entry inside the index", 64, false},
		{"data ending at index_start", v2file(1, etEntry("w", 0, 64, 1)), true, 1, "", 0, true},
		{"data one byte past index_start", v2file(1, etEntry("w", 0, 65, 1)), false, 0, "file_offset < index_start and data_size <= index_start - file_offset", 64 + 5, false},
		{"offset at index_start", v2file(1, etEntry("w", 64, 0, 1)), false, 0, "file_offset < index_start and data_size <= index_start - file_offset", 64 + 5, false},
		{"offset just below index_start", v2file(1, etEntry("w", 63, 1, 1)), true, 1, "", 0, false},
		{"data from 8 one byte past index_start", v2file(1, etEntry("w", 8, 57, 1)), false, 0, "file_offset < index_start and data_size <= index_start - file_offset", 64 + 5, false},
		{"a record beyond count", v2file(1, e, etEntry("v", 8, 8, 1)), true, 1, "", 0, false},
	} {
		v, err := spec.ExecuTorchLoad(bytes.NewReader(tc.file), int64(len(tc.file)))
		require.NoError(t, err, tc.name)
		require.Equal(t, spec.ExecuTorchVerdict{Accepts: tc.accepts, Entries: tc.entries, Rule: tc.rule, Off: tc.off}, v, tc.name)
		_, perr := spec.ParseV2(bytes.NewReader(tc.file), int64(len(tc.file)))
		require.Equal(t, tc.strict, perr == nil, "%s: ParseV2: %v", tc.name, perr)
	}
}

// TestExecuTorchLoadBounded: a forged footer over a sparse file is not
// walked record by record past ExecuTorchMaxIndex.
func TestExecuTorchLoadBounded(t *testing.T) {
	for _, h := range spectest.HostileFiles()[:2] {
		_, err := spec.ExecuTorchLoad(h.File, h.File.Size)
		require.ErrorIs(t, err, spec.ErrIndexTooLarge, h.Name)
	}
}

// TestDecodedBeforeTheError: a damaged index reports, with its error, the
// entries it yielded before the first inconsistency (for diagnosis), in
// both formats; the error still matches its sentinel and names its offset.
func TestDecodedBeforeTheError(t *testing.T) {
	var idx []byte
	for i := range 3 {
		idx = append(idx, etEntry("w"+string(rune('a'+i)), uint64(i)*4096, 100, 1)...)
	}
	idx = append(idx, etEntry("", 0, 0, 1)...) // empty name: ErrBadName
	v2 := append(make([]byte, 3*4096), idx...)
	v2 = append(v2, etFooter(3*4096, 4, spec.V2Magic, 2)...)
	_, err := spec.ParseV2(bytes.NewReader(v2), int64(len(v2)))
	var de *spec.DecodedError
	require.ErrorAs(t, err, &de)
	require.ErrorIs(t, err, spec.ErrBadName)
	require.Len(t, de.Decoded, 3)
	require.Equal(t, "wc", de.Decoded[2].Key.Weight)
	var fe *spec.FormatError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, int64(3*4096+3*(spec.V2EntryFixedSize+2)), fe.Off)

	b := spectest.NewV3(4096)
	b.Save(spectest.Weights(3, 100, 1))
	b.Entries[2].Offset = 1 // misaligned: decoded after two good entries
	idx3 := spec.EncodeV3Index(b.Entries)
	off := uint64(len(b.File))
	file := append(append([]byte(nil), b.File...), idx3...)
	copy(file[spec.V3SlotSize:], spec.EncodeCommitSlot(spec.NewCommit(3, 4096, off, idx3)))
	_, err = spec.ParseV3(bytes.NewReader(file), int64(len(file)))
	require.ErrorAs(t, err, &de)
	require.ErrorIs(t, err, spec.ErrMisaligned)
	require.Len(t, de.Decoded, 2)
}
