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
