package spec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

var le = binary.LittleEndian

func parseV2(b []byte) (*spec.V2File, error) {
	return spec.ParseV2(bytes.NewReader(b), int64(len(b)))
}

// etEntry writes one entry exactly as ExecuTorch's save_packed_index does,
// field by field, independently of EncodeV2Index.
func etEntry(name string, off, size uint64, seed uint32) []byte {
	var b []byte
	b = le.AppendUint32(b, uint32(len(name)))
	b = append(b, name...)
	b = le.AppendUint64(b, off)
	b = le.AppendUint64(b, size)
	return le.AppendUint32(b, seed)
}

func etFooter(indexStart uint64, count, magic, version uint32) []byte {
	var b []byte
	b = le.AppendUint64(b, indexStart)
	b = le.AppendUint32(b, count)
	b = le.AppendUint32(b, magic)
	return le.AppendUint32(b, version)
}

// TestV2ByteExactWithExecuTorch builds a file the way ExecuTorch lays it out
// (page-aligned regions, hash-order index, bias name appended to the weight
// name) by hand and checks that the encoder produces the same bytes and the
// parser reads the same entries.
func TestV2ByteExactWithExecuTorch(t *testing.T) {
	const page = 4096
	// Regions of 100 B at 0, 5000 B at 4096 (two pages) and 64 B at 12288,
	// each page-padded, so the index starts at 16384.
	file := make([]byte, 4*page)
	for i := range file {
		file[i] = byte(i * 7)
	}
	indexStart := uint64(len(file))
	want := append([]byte(nil), file...)
	// Hash order, not offset order, as ExecuTorch's unordered_map yields.
	want = append(want, etEntry("layers.1.wqlayers.1.bq", 4096, 5000, 0xA1B2C3D4)...)
	want = append(want, etEntry("layers.0.wq", 0, 100, 0x11111111)...)
	want = append(want, etEntry("layers.2.wqlayers.2.bq", 12288, 64, 0x22222222)...)
	want = append(want, etFooter(indexStart, 3, 0x58505743, 2)...)

	entries := []spec.Entry{
		{Key: spec.Key{Weight: "layers.1.wq", Bias: "layers.1.bq", Seed: 0xA1B2C3D4}, Offset: 4096, Size: 5000},
		{Key: spec.Key{Weight: "layers.0.wq", Seed: 0x11111111}, Offset: 0, Size: 100},
		{Key: spec.Key{Weight: "layers.2.wq", Bias: "layers.2.bq", Seed: 0x22222222}, Offset: 12288, Size: 64},
	}
	got := append(append([]byte(nil), file...), spec.EncodeV2Index(indexStart, entries)...)
	require.Equal(t, want, got)
	require.Equal(t, []byte("CWPX"), got[len(got)-8:len(got)-4], "magic bytes on disk")

	v, err := parseV2(got)
	require.NoError(t, err)
	require.Len(t, v.Entries, 3)
	assert.Equal(t, indexStart, v.IndexStart)
	assert.Equal(t, "layers.1.wqlayers.1.bq", v.Entries[0].Key.Weight)
	assert.Empty(t, v.Entries[0].Key.Bias)
	assert.Equal(t, uint32(0xA1B2C3D4), v.Entries[0].Key.Seed)
	assert.Equal(t, spec.Entry{Key: spec.Key{Weight: "layers.0.wq", Seed: 0x11111111}, Offset: 0, Size: 100}, v.Entries[1])
	assert.Equal(t, uint64(5164), v.LiveBytes)
	assert.Equal(t, indexStart-5164, v.GarbageBytes)
	// Re-encoding the parsed index gives the same bytes.
	assert.Equal(t, got[indexStart:], spec.EncodeV2Index(v.IndexStart, v.Entries))
}

// TestV2BuilderFiles parses files built like ExecuTorch writes them at 4 KiB
// and 16 KiB pages.
func TestV2BuilderFiles(t *testing.T) {
	for _, page := range []int{4096, 16384} {
		ws := spectest.Weights(7, 3000, 9)
		file, entries := spectest.BuildV2(page, ws)
		v, err := parseV2(file)
		require.NoError(t, err, "page %d", page)
		require.Equal(t, entries, v.Entries)
		for i, e := range v.Entries {
			assert.Equal(t, ws[i].Data, file[e.Offset:e.End()])
			assert.Equal(t, ws[i].Key.Weight+ws[i].Key.Bias, e.Key.Weight)
		}
	}
}

// TestV2ExecuTorchRejections are the files ExecuTorch's own tests reject,
// each rejected here with the right typed error.
func TestV2ExecuTorchRejections(t *testing.T) {
	t.Run("1024 bytes of 0xCC", func(t *testing.T) {
		_, err := parseV2(bytes.Repeat([]byte{0xCC}, 1024))
		require.ErrorIs(t, err, spec.ErrBadMagic)
	})
	t.Run("genuine v1 file", func(t *testing.T) {
		// v1 entries had no seed: name_len, name, offset, size.
		file := make([]byte, 4096)
		var idx []byte
		idx = le.AppendUint32(idx, 10)
		idx = append(idx, "weightbias"...)
		idx = le.AppendUint64(idx, 0)
		idx = le.AppendUint64(idx, 512)
		file = append(file, idx...)
		file = append(file, etFooter(4096, 1, 0x58505743, 1)...)
		_, err := parseV2(file)
		require.ErrorIs(t, err, spec.ErrUnsupportedVersion)
		var ve *spec.VersionError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, spec.VersionError{Got: 1, Want: 2}, *ve)
	})
	t.Run("zero-entry trailer", func(t *testing.T) {
		// What a save with no file-backed entries writes (docs/bugs.md, "18. Zero-entry trailers").
		_, err := parseV2(etFooter(0, 0, 0x58505743, 2))
		require.ErrorIs(t, err, spec.ErrEmptyIndex)
		file := append(make([]byte, 4096), etFooter(4096, 0, 0x58505743, 2)...)
		_, err = parseV2(file)
		require.ErrorIs(t, err, spec.ErrEmptyIndex)
	})
	t.Run("index_start out of range", func(t *testing.T) {
		file := append(make([]byte, 64), etFooter(65, 1, 0x58505743, 2)...)
		_, err := parseV2(file)
		require.ErrorIs(t, err, spec.ErrIndexOutOfBounds)
		var fe *spec.FormatError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "index_start", fe.Field)
		assert.Equal(t, uint64(65), fe.Val)
	})
	t.Run("PR 20562 mid-trailer truncation", func(t *testing.T) {
		// 16 data bytes, one 25-byte entry, 2 stray bytes, footer with
		// count 2: 63 bytes, which ExecuTorch loads as one entry.
		file := make([]byte, 16)
		file = append(file, etEntry("w", 0, 8, 0x12345678)...)
		file = append(file, 0xAB, 0xCD)
		file = append(file, etFooter(16, 2, 0x58505743, 2)...)
		require.Len(t, file, 63)
		_, err := parseV2(file)
		require.ErrorIs(t, err, spec.ErrCountMismatch)
	})
}

// TestV2Errors is the table of every v2 typed error.
func TestV2Errors(t *testing.T) {
	data := make([]byte, 8192)
	good := func(es ...[]byte) []byte {
		f := append([]byte(nil), data...)
		for _, e := range es {
			f = append(f, e...)
		}
		return append(f, etFooter(8192, uint32(len(es)), spec.V2Magic, 2)...)
	}
	withFooter := func(idx []byte, count uint32) []byte {
		f := append(append([]byte(nil), data...), idx...)
		return append(f, etFooter(8192, count, spec.V2Magic, 2)...)
	}
	a := etEntry("a", 0, 100, 1)
	b := etEntry("b", 4096, 100, 2)
	long := etEntry("a-long-name-to-pad-the-index-out", 0, 1, 1) // 56 bytes
	cases := []struct {
		name string
		file []byte
		want error
	}{
		{"empty file", nil, spec.ErrTooSmall},
		{"19 bytes", make([]byte, 19), spec.ErrTooSmall},
		{"bad magic", etFooter(0, 1, 0x58505744, 2), spec.ErrBadMagic},
		{"version 3 footer", etFooter(0, 1, spec.V2Magic, 3), spec.ErrUnsupportedVersion},
		{"index_start past footer", append(make([]byte, 10), etFooter(11, 1, spec.V2Magic, 2)...), spec.ErrIndexOutOfBounds},
		{"index_start huge", append(make([]byte, 10), etFooter(1<<63, 1, spec.V2Magic, 2)...), spec.ErrIndexOutOfBounds},
		{"count zero with entries", withFooter(a, 0), spec.ErrEmptyIndex},
		{"count beyond index size", withFooter(a, 2), spec.ErrCountMismatch},
		{"count 2^32-1", withFooter(a, 1<<32-1), spec.ErrCountMismatch},
		{"index ends before count", withFooter(append(etEntry("a-long-name-to-pad-the-index-out", 0, 1, 1), 0, 0), 2), spec.ErrCountMismatch},
		{"trailing bytes", withFooter(append(append([]byte(nil), a...), 0, 0, 0), 1), spec.ErrTrailingBytes},
		{"one entry too many", withFooter(append(append([]byte(nil), a...), b...), 1), spec.ErrTrailingBytes},
		{"name_len past index", withFooter(append(le.AppendUint32(nil, 1000), make([]byte, 40)...), 1), spec.ErrEntryOutOfBounds},
		{"name_len 2^32-1", withFooter(append(le.AppendUint32(nil, 1<<32-1), make([]byte, 40)...), 1), spec.ErrEntryOutOfBounds},
		{"partial entry", withFooter(append(append([]byte(nil), a...), etEntry("b", 0, 1, 1)[:10]...), 2), spec.ErrCountMismatch},
		{"data past index_start", good(etEntry("a", 4096, 4097, 1)), spec.ErrEntryOutOfBounds},
		{"offset at index_start", good(etEntry("a", 8192, 0, 1)), spec.ErrEntryOutOfBounds},
		{"size overflows", good(etEntry("a", 4096, 1<<64-1, 1)), spec.ErrEntryOutOfBounds},
		{"misaligned offset", good(etEntry("a", 64, 64, 1)), spec.ErrMisaligned},
		{"empty name", good(etEntry("", 0, 64, 1)), spec.ErrBadName},
		{"name with NUL", good(etEntry("a\x00b", 0, 64, 1)), spec.ErrBadName},
		{"name too long", good(etEntry(string(bytes.Repeat([]byte{'n'}, spec.V2MaxNameLen+1)), 0, 64, 1)), spec.ErrBadName},
		{"duplicate name", good(a, etEntry("a", 4096, 1, 9)), spec.ErrDuplicateName},
		{"overlap, offset order", good(etEntry("a", 0, 4097, 1), b), spec.ErrOverlap},
		{"overlap, hash order", good(b, etEntry("c", 0, 5000, 1)), spec.ErrOverlap},
		{"same offset twice", good(a, etEntry("c", 0, 1, 1)), spec.ErrOverlap},
		// At the exact bounds, and errors past the first entry.
		{"bad magic after data", append(make([]byte, 100), etFooter(0, 1, 0x58505744, 2)...), spec.ErrBadMagic},
		{"version 1 footer after data", append(make([]byte, 100), etFooter(0, 1, spec.V2Magic, 1)...), spec.ErrUnsupportedVersion},
		{"four bytes left for an entry", withFooter(append(long, 0, 0, 0, 0), 2), spec.ErrEntryOutOfBounds},
		{"name_len one past index", withFooter(append(le.AppendUint32(nil, 21), make([]byte, 40)...), 1), spec.ErrEntryOutOfBounds},
		{"second name_len past index", withFooter(append(long, append(le.AppendUint32(nil, 21), make([]byte, 40)...)...), 2), spec.ErrEntryOutOfBounds},
		{"second entry misaligned", good(a, etEntry("bb", 4096+512, 1, 1)), spec.ErrMisaligned},
		{"second name with NUL", good(a, etEntry("\x00", 4096, 64, 1)), spec.ErrBadName},
		{"duplicate name, third entry", good(a, b, etEntry("b", 0, 1, 9)), spec.ErrDuplicateName},
	}
	// Where each error points: the field, its byte offset, the value read.
	where := map[string]fieldAt{
		"empty file":                   {"file_size", 0, 0},
		"19 bytes":                     {"file_size", 0, 19},
		"bad magic":                    {"magic", 12, 1481660228},
		"version 3 footer":             {"version", 16, 3},
		"index_start past footer":      {"index_start", 10, 11},
		"index_start huge":             {"index_start", 10, 9223372036854775808},
		"count zero with entries":      {"entry_count", 8225, 0},
		"count beyond index size":      {"entry_count", 8225, 2},
		"count 2^32-1":                 {"entry_count", 8225, 4294967295},
		"index ends before count":      {"entry_count", 8258, 2},
		"trailing bytes":               {"index", 8217, 3},
		"one entry too many":           {"index", 8217, 25},
		"name_len past index":          {"name_len", 8192, 1000},
		"name_len 2^32-1":              {"name_len", 8192, 4294967295},
		"partial entry":                {"entry_count", 8235, 2},
		"data past index_start":        {"file_offset", 8197, 4096},
		"offset at index_start":        {"file_offset", 8197, 8192},
		"size overflows":               {"file_offset", 8197, 4096},
		"misaligned offset":            {"file_offset", 8197, 64},
		"empty name":                   {"name_len", 8192, 0},
		"name with NUL":                {"name", 8196, 3},
		"name too long":                {"name_len", 8192, 8193},
		"duplicate name":               {"name", 8192, 1},
		"overlap, offset order":        {"file_offset", 8192, 4096},
		"overlap, hash order":          {"file_offset", 8192, 4096},
		"same offset twice":            {"file_offset", 8192, 0},
		"bad magic after data":         {"magic", 112, 0x58505744},
		"version 1 footer after data":  {"version", 116, 1},
		"four bytes left for an entry": {"name_len", 8192 + 56, 0},
		"name_len one past index":      {"name_len", 8192, 21},
		"second name_len past index":   {"name_len", 8192 + 56, 21},
		"second entry misaligned":      {"file_offset", 8192 + 25 + 4 + 2, 4096 + 512},
		"second name with NUL":         {"name", 8192 + 25 + 4, 1},
		"duplicate name, third entry":  {"name", 8192, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := parseV2(tc.file)
			require.Error(t, err)
			assert.Nil(t, v)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorIs(t, err, spec.ErrCorrupt)
			var fe *spec.FormatError
			require.ErrorAs(t, err, &fe)
			requireAt(t, where[tc.name], fe)
		})
	}
	// Controls: the valid variants of the files above parse.
	for _, f := range [][]byte{good(a), good(a, b), good(b, a), good(etEntry("a", 0, 8192, 1)), good(a, etEntry("z", 4096, 0, 1))} {
		_, err := parseV2(f)
		require.NoError(t, err)
	}
}

// errReader fails every read, to tell I/O errors from corruption.
type errReader struct{}

var errIO = errors.New("disk on fire")

func (errReader) ReadAt([]byte, int64) (int, error) { return 0, errIO }

func TestV2ReadErrors(t *testing.T) {
	_, err := spec.ParseV2(errReader{}, 100)
	require.ErrorIs(t, err, errIO)
	assert.NotErrorIs(t, err, spec.ErrCorrupt, "an I/O error is not corruption")

	// A size larger than the bytes behind the reader: the file shrank.
	file, _ := spectest.BuildV2(4096, spectest.Weights(2, 10, 1))
	_, err = spec.ParseV2(bytes.NewReader(file[:len(file)-30]), int64(len(file)))
	require.ErrorIs(t, err, spec.ErrTooSmall)
}

// TestV2EveryPrefixRejected: a file cut anywhere (a crash during ExecuTorch's
// pwrite of the trailer) never parses as a smaller valid file.
func TestV2EveryPrefixRejected(t *testing.T) {
	file, _ := spectest.BuildV2(4096, spectest.Weights(3, 10, 1))
	for n := 0; n < len(file); n++ {
		_, err := parseV2(file[:n])
		require.ErrorIs(t, err, spec.ErrCorrupt, "prefix %d", n)
	}
}

// TestEncodersAllocateOnce: the index encoders size their output from the
// entries before writing (a writer encodes a million-entry index on every
// save), so each encode is one allocation of exactly the encoded length;
// names with a bias and of different lengths count every byte.
func TestEncodersAllocateOnce(t *testing.T) {
	entries := []spec.Entry{
		{Key: spec.Key{Weight: "layers.0.w", Bias: "layers.0.bias"}, Offset: 4096, Size: 10},
		{Key: spec.Key{Weight: "w"}, Offset: 8192, Size: 10},
		{Key: spec.Key{Weight: "layers.1.w", Bias: "b"}, Offset: 12288, Size: 10},
	}
	var v2, v3 []byte
	assert.Equal(t, 1.0, testing.AllocsPerRun(10, func() { v2 = spec.EncodeV2Index(16384, entries) }), "v2")
	assert.Equal(t, 1.0, testing.AllocsPerRun(10, func() { v3 = spec.EncodeV3Index(entries) }), "v3")
	assert.Equal(t, len(v2), cap(v2), "v2 capacity")
	assert.Equal(t, len(v3), cap(v3), "v3 capacity")
}
