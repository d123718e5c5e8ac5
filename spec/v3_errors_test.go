package spec_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// rawV3Entry lays out one v3 index entry field by field, independently of
// EncodeV3Index, so tests can write names the encoder would not.
func rawV3Entry(name string, off, size uint64) []byte {
	var b []byte
	b = le.AppendUint64(b, off)
	b = le.AppendUint64(b, size)
	b = le.AppendUint64(b, 0xF1F2F3F4F5F6F7F8) // fingerprint
	b = le.AppendUint64(b, 0x5050505050505050) // source
	b = le.AppendUint64(b, 0xC0B1C0B1C0B1C0B1) // copy id
	b = le.AppendUint32(b, 0x5EED)             // seed
	b = le.AppendUint32(b, 0xC0C0C0C0)         // data crc
	b = le.AppendUint32(b, uint32(len(name)))
	b = append(b, name...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

func rawV3Index(count uint64, entries ...[]byte) []byte {
	b := []byte("XPWCIDX3")
	b = le.AppendUint64(b, count)
	for _, e := range entries {
		b = append(b, e...)
	}
	return b
}

// rawSlot lays out a commit slot by hand; fix recomputes its CRC.
func rawSlot(version, page uint32, gen, indexOff, indexLen uint64, indexCRC uint32) []byte {
	b := make([]byte, 512)
	copy(b, "XPWCSLOT")
	le.PutUint32(b[8:], version)
	le.PutUint32(b[12:], page)
	le.PutUint64(b[16:], gen)
	le.PutUint64(b[24:], indexOff)
	le.PutUint64(b[32:], indexLen)
	le.PutUint32(b[40:], indexCRC)
	le.PutUint32(b[44:], 1) // data checksum: XXH3
	return fixSlot(b)
}

func fixSlot(b []byte) []byte {
	le.PutUint32(b[508:], spec.CRC32C(b[:508]))
	return b
}

// v3File is a header page, dataPages zero pages, then index at the next
// page, committed in slot 1 as generation 1 unless slot1 is given.
func v3File(dataPages int, index []byte, slot1 func(off uint64, idx []byte) []byte) []byte {
	const page = 4096
	f := spec.EncodeV3Header(page)
	f = append(f, make([]byte, dataPages*page)...)
	off := uint64(len(f))
	f = append(f, index...)
	var s []byte
	if slot1 != nil {
		s = slot1(off, index)
	} else {
		s = rawSlot(4, page, 1, off, uint64(len(index)), spec.CRC32C(index))
	}
	copy(f[512:], s)
	return f
}

// TestV3ByteLayout pins the encoders to the layout of docs/format.md.
func TestV3ByteLayout(t *testing.T) {
	e := spec.Entry{
		Key:    spec.Key{Weight: "w1", Bias: "b", Seed: 0x5EED, Fingerprint: 0xF1F2F3F4F5F6F7F8, Source: 0x5050505050505050},
		Offset: 8192, Size: 300, CRC: 0xC0C0C0C0, CopyID: 0xC0B1C0B1C0B1C0B1,
	}
	want := rawV3Index(1, rawV3Entry("w1\x00b", 8192, 300))
	require.Equal(t, want, spec.EncodeV3Index([]spec.Entry{e}))
	require.Len(t, want, 16+56)

	c := spec.Commit{Generation: 7, IndexOff: 12288, IndexLen: 64, IndexCRC: 0xDEADBEEF, PageSize: 16384}
	require.Equal(t, rawSlot(4, 16384, 7, 12288, 64, 0xDEADBEEF), spec.EncodeCommitSlot(c))
	assert.Equal(t, int64(512), spec.CommitSlotOffset(7))
	assert.Equal(t, int64(0), spec.CommitSlotOffset(8))
	got, err := spec.ParseCommitSlot(spec.EncodeCommitSlot(c), 1)
	require.NoError(t, err)
	assert.Equal(t, c, got)
}

// TestV3Errors is the table of every v3 typed error.
func TestV3Errors(t *testing.T) {
	const page = 4096
	one := rawV3Entry("w\x00", page, 100)
	two := rawV3Entry("v\x00b", 2*page, 100)
	ok := func(es ...[]byte) []byte { return v3File(2, rawV3Index(uint64(len(es)), es...), nil) }
	slot := func(edit func(s []byte)) []byte {
		return v3File(2, rawV3Index(1, one), func(off uint64, idx []byte) []byte {
			s := rawSlot(4, page, 1, off, uint64(len(idx)), spec.CRC32C(idx))
			edit(s)
			return s
		})
	}
	commit := func(edit func(c *spec.Commit)) []byte {
		return v3File(2, rawV3Index(1, one), func(off uint64, idx []byte) []byte {
			c := spec.NewCommit(1, page, off, idx)
			edit(&c)
			return spec.EncodeCommitSlot(c)
		})
	}
	badPad := rawV3Entry("w\x00", page, 1) // 52 + 2 name bytes + 2 padding
	badPad[55] = 1
	longName := string(bytes.Repeat([]byte{'n'}, 100)) + "\x00" // a 160-byte entry
	w := func(n int) string { return string(bytes.Repeat([]byte{'w'}, n)) }
	// tail is ok's file grown with zeros to five pages, so that data can
	// end exactly at the end of the file, after the index.
	tail := func(es ...[]byte) []byte {
		f := ok(es...)
		return append(f, make([]byte, 5*page-len(f))...)
	}
	// dataAfterIndex: an index of exactly one page (one entry with a
	// 4028-byte name) and the entry's data starting where it ends.
	dataAfterIndex := tail(rawV3Entry(w(2000)+"\x00"+string(bytes.Repeat([]byte{'b'}, 2027)), 4*page, 1))
	// headerOnly is a file of exactly one page whose slot names an index
	// at its end.
	headerOnly := spec.EncodeV3Header(page)
	copy(headerOnly[512:], rawSlot(4, page, 1, page, 16, 0))
	cases := []struct {
		name string
		file []byte
		want error
	}{
		{"shorter than two slots", make([]byte, 1023), spec.ErrTooSmall},
		{"shorter than the recorded page", slot(func(s []byte) { le.PutUint32(s[12:], 64<<10); fixSlot(s) }), spec.ErrTooSmall},
		{"both slots bad magic", bytes.Repeat([]byte{0xCC}, 8192), spec.ErrBadMagic},
		{"slot version 5", slot(func(s []byte) { le.PutUint32(s[8:], 5); fixSlot(s) }), spec.ErrUnsupportedVersion},
		{"slot version 3 (entries without copy_id)", slot(func(s []byte) { le.PutUint32(s[8:], 3); fixSlot(s) }), spec.ErrUnsupportedVersion},
		{"slot data checksum 0 (CRC32C, files before XXH3)", slot(func(s []byte) { le.PutUint32(s[44:], 0); fixSlot(s) }), spec.ErrUnsupportedChecksum},
		{"slot data checksum 2", slot(func(s []byte) { le.PutUint32(s[44:], 2); fixSlot(s) }), spec.ErrUnsupportedChecksum},
		{"slot_crc", slot(func(s []byte) { s[30] ^= 1 }), spec.ErrChecksum},
		{"slot torn to zeros", slot(func(s []byte) { clear(s[100:]) }), spec.ErrChecksum},
		{"page size 2048", slot(func(s []byte) { le.PutUint32(s[12:], 2048); fixSlot(s) }), spec.ErrBadPageSize},
		{"page size 12288", slot(func(s []byte) { le.PutUint32(s[12:], 12288); fixSlot(s) }), spec.ErrBadPageSize},
		{"page size 128 KiB", slot(func(s []byte) { le.PutUint32(s[12:], 128<<10); fixSlot(s) }), spec.ErrBadPageSize},
		{"reserved byte set", slot(func(s []byte) { s[300] = 1; fixSlot(s) }), spec.ErrBadSlot},
		{"generation in wrong slot", slot(func(s []byte) { le.PutUint64(s[16:], 2); fixSlot(s) }), spec.ErrBadSlot},
		{"generation 0 with an index", slot(func(s []byte) { le.PutUint64(s[16:], 0); fixSlot(s) }), spec.ErrBadSlot},
		{"never committed", spec.EncodeV3Header(page), spec.ErrNoCommit},
		{"index_crc", commit(func(c *spec.Commit) { c.IndexCRC++ }), spec.ErrChecksum},
		{"index past end of file", commit(func(c *spec.Commit) { c.IndexOff += 8 }), spec.ErrIndexOutOfBounds},
		{"index length past end", commit(func(c *spec.Commit) { c.IndexLen = 1 << 63 }), spec.ErrIndexOutOfBounds},
		{"index inside header", commit(func(c *spec.Commit) { c.IndexOff = 1024 }), spec.ErrIndexOutOfBounds},
		{"index offset huge", commit(func(c *spec.Commit) { c.IndexOff = 1<<64 - 8 }), spec.ErrIndexOutOfBounds},
		{"index shorter than its header", commit(func(c *spec.Commit) { c.IndexLen = 8; c.IndexCRC = 0 }), spec.ErrIndexOutOfBounds},
		{"index offset misaligned", commit(func(c *spec.Commit) { c.IndexOff -= 4 }), spec.ErrMisaligned},
		{"magic", v3File(2, append([]byte("XPWCIDX2"), rawV3Index(1, one)[8:]...), nil), spec.ErrBadMagic},
		{"count 2^64-1", v3File(2, rawV3Index(1<<64-1, one), nil), spec.ErrCountMismatch},
		{"count beyond entries", v3File(2, rawV3Index(2, rawV3Entry(longName, page, 1)), nil), spec.ErrCountMismatch},
		{"entry beyond count", v3File(2, rawV3Index(1, one, two), nil), spec.ErrTrailingBytes},
		{"trailing zeros", v3File(2, append(rawV3Index(1, one), make([]byte, 8)...), nil), spec.ErrTrailingBytes},
		{"non-zero padding", v3File(2, rawV3Index(1, badPad), nil), spec.ErrTrailingBytes},
		{"partial entry", v3File(2, rawV3Index(2, rawV3Entry(longName, page, 1), two[:40]), nil), spec.ErrEntryOutOfBounds},
		{"name_len past index", v3File(2, rawV3Index(1, append(rawV3Entry("w\x00", page, 1)[:48], 0xFF, 0xFF, 0xFF, 0xFF, 'w', 0, 0, 0)), nil), spec.ErrEntryOutOfBounds},
		{"data past end of file", ok(rawV3Entry("w\x00", page, 1<<20)), spec.ErrEntryOutOfBounds},
		{"size overflows", ok(rawV3Entry("w\x00", page, 1<<64-1)), spec.ErrEntryOutOfBounds},
		{"offset past end of file", ok(rawV3Entry("w\x00", 1<<40, 0)), spec.ErrEntryOutOfBounds},
		{"data in header", ok(rawV3Entry("w\x00", 0, 10)), spec.ErrEntryOutOfBounds},
		{"data over the index", ok(rawV3Entry("w\x00", 3*page, 10)), spec.ErrEntryOutOfBounds},
		{"misaligned data", ok(rawV3Entry("w\x00", page+64, 10)), spec.ErrMisaligned},
		{"name without separator", ok(rawV3Entry("wb", page, 10)), spec.ErrBadName},
		{"name with two separators", ok(rawV3Entry("w\x00b\x00", page, 10)), spec.ErrBadName},
		{"empty weight name", ok(rawV3Entry("\x00b", page, 10)), spec.ErrBadName},
		{"weight name too long", ok(rawV3Entry(string(bytes.Repeat([]byte{'w'}, spec.MaxNameLen+1))+"\x00", page, 10)), spec.ErrBadName},
		{"duplicate name", ok(one, rawV3Entry("w\x00", 2*page, 10)), spec.ErrDuplicateName},
		{"overlap", ok(rawV3Entry("w\x00", page, page+1), two), spec.ErrOverlap},
		{"overlap, unordered", ok(two, rawV3Entry("w\x00", page, page+1)), spec.ErrOverlap},
		// At the exact bounds: one byte either side of what fits.
		{"first reserved byte set", slot(func(s []byte) { s[48] = 7; fixSlot(s) }), spec.ErrBadSlot},
		{"last reserved byte set", slot(func(s []byte) { s[507] = 9; fixSlot(s) }), spec.ErrBadSlot},
		{"index length one past end", commit(func(c *spec.Commit) { c.IndexLen++ }), spec.ErrIndexOutOfBounds},
		{"index one byte shorter than its header", commit(func(c *spec.Commit) { c.IndexLen = 15; c.IndexCRC = 0 }), spec.ErrIndexOutOfBounds},
		{"count one past what fits", v3File(2, rawV3Index(2, one), nil), spec.ErrCountMismatch},
		{"padding past index", v3File(2, rawV3Index(2, rawV3Entry(longName, page, 1), rawV3Entry("w\x00b", page, 1)[:55]), nil), spec.ErrEntryOutOfBounds},
		{"entry of only its fixed fields", v3File(2, rawV3Index(2, rawV3Entry(longName, page, 1), rawV3Entry("", 2*page, 1)[:52]), nil), spec.ErrEntryOutOfBounds},
		{"entry one byte short", v3File(2, rawV3Index(2, rawV3Entry(longName, page, 1), two[:51]), nil), spec.ErrEntryOutOfBounds},
		{"name_len one past index", v3File(2, rawV3Index(1, append(rawV3Entry("w\x00", page, 1)[:48], 5, 0, 0, 0, 'w', 0, 0, 0)), nil), spec.ErrEntryOutOfBounds},
		{"name_len over the longest name", ok(rawV3Entry(w(spec.MaxNameLen)+"\x00"+w(spec.MaxNameLen+1), page, 10)), spec.ErrBadName},
		{"data one byte past end of file", ok(rawV3Entry("w\x00", page, 3*page+16+56-page+1)), spec.ErrEntryOutOfBounds},
		{"data into the index", ok(rawV3Entry("w\x00", 2*page, page+1)), spec.ErrEntryOutOfBounds},
		{"second entry misaligned", ok(one, rawV3Entry("v\x00", 2*page+8, 10)), spec.ErrMisaligned},
		{"bias name too long", ok(rawV3Entry("w\x00"+w(spec.MaxNameLen+1), page, 10)), spec.ErrBadName},
		{"count past what fits, 24 bytes to spare", v3File(2, rawV3Index(2, one, make([]byte, 24)), nil), spec.ErrCountMismatch},
		{"data of one byte at end of file", tail(rawV3Entry("w\x00", 5*page, 1)), spec.ErrEntryOutOfBounds},
		{"file of exactly one page", headerOnly, spec.ErrIndexOutOfBounds},
		{"index at end of file", commit(func(c *spec.Commit) { c.IndexOff += c.IndexLen }), spec.ErrIndexOutOfBounds},
	}
	// Where each error points: the field, its byte offset, the value read
	// (anyVal: a checksum computed over the bytes).
	where := map[string]fieldAt{
		"shorter than two slots":                           {"file_size", 0, 1023},
		"shorter than the recorded page":                   {"file_size", 0, 12360},
		"both slots bad magic":                             {"magic", 0, 14757395258967641292},
		"slot version 5":                                   {"version", 520, 5},
		"slot version 3 (entries without copy_id)":         {"version", 520, 3},
		"slot data checksum 0 (CRC32C, files before XXH3)": {"data_checksum", 556, 0},
		"slot data checksum 2":                             {"data_checksum", 556, 2},
		"slot_crc":                                         {"slot_crc", 1020, anyVal},
		"slot torn to zeros":                               {"slot_crc", 1020, 0},
		"page size 2048":                                   {"page_size", 524, 2048},
		"page size 12288":                                  {"page_size", 524, 12288},
		"page size 128 KiB":                                {"page_size", 524, 131072},
		"reserved byte set":                                {"reserved", 812, 1},
		"generation in wrong slot":                         {"generation", 528, 2},
		"generation 0 with an index":                       {"index_off", 536, 12288},
		"never committed":                                  {"generation", 16, 0},
		"index_crc":                                        {"index_crc", 12288, anyVal},
		"index past end of file":                           {"index_len", 544, 72},
		"index length past end":                            {"index_len", 544, 9223372036854775808},
		"index inside header":                              {"index_off", 536, 1024},
		"index offset huge":                                {"index_off", 536, 18446744073709551608},
		"index shorter than its header":                    {"index_len", 544, 8},
		"index offset misaligned":                          {"index_off", 536, 12284},
		"magic":                                            {"magic", 12288, 3627724581300031576},
		"count 2^64-1":                                     {"count", 12296, 18446744073709551615},
		"count beyond entries":                             {"count", 12296, 2},
		"entry beyond count":                               {"index", 12360, 56},
		"trailing zeros":                                   {"index", 12360, 8},
		"non-zero padding":                                 {"padding", 12358, 1},
		"partial entry":                                    {"entry", 12464, 40},
		"name_len past index":                              {"name_len", 12352, 4294967295},
		"data past end of file":                            {"size", 12312, 1048576},
		"size overflows":                                   {"size", 12312, 18446744073709551615},
		"offset past end of file":                          {"offset", 12304, 1099511627776},
		"data in header":                                   {"offset", 12304, 0},
		"data over the index":                              {"offset", 12304, 12288},
		"misaligned data":                                  {"offset", 12304, 4160},
		"name without separator":                           {"name", 12356, 2},
		"name with two separators":                         {"name", 12356, 4},
		"empty weight name":                                {"name", 12356, 2},
		"weight name too long":                             {"name", 12356, 4098},
		"duplicate name":                                   {"name", 12288, 1},
		"overlap":                                          {"offset", 12288, 8192},
		"overlap, unordered":                               {"offset", 12288, 8192},
		"first reserved byte set":                          {"reserved", 560, 7},
		"last reserved byte set":                           {"reserved", 1019, 9},
		"index length one past end":                        {"index_len", 544, 73},
		"index one byte shorter than its header":           {"index_len", 544, 15},
		"count one past what fits":                         {"count", 12296, 2},
		"padding past index":                               {"padding", 12288 + 16 + 160 + 55, 1},
		"entry of only its fixed fields":                   {"padding", 12288 + 16 + 160 + 52, 4},
		"entry one byte short":                             {"entry", 12464, 51},
		"name_len one past index":                          {"name_len", 12352, 5},
		"name_len over the longest name":                   {"name_len", 12352, 2*spec.MaxNameLen + 2},
		"data one byte past end of file":                   {"size", 12312, 12360 - 4096 + 1},
		"data into the index":                              {"offset", 12304, 8192},
		"second entry misaligned":                          {"offset", 12360, 8200},
		"bias name too long":                               {"name", 12356, spec.MaxNameLen + 3},
		"count past what fits, 24 bytes to spare":          {"count", 12296, 2},
		"data of one byte at end of file":                  {"size", 12312, 1},
		"file of exactly one page":                         {"index_len", 544, 16},
		"index at end of file":                             {"index_len", 544, 72},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := parseV3(tc.file)
			require.Error(t, err)
			assert.Nil(t, v)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorIs(t, err, spec.ErrCorrupt)
			fe := formatErrorFor(err, tc.want)
			require.NotNil(t, fe, "no FormatError for %v in %v", tc.want, err)
			requireAt(t, where[tc.name], fe)
		})
	}
	// Controls: the valid neighbours of the files above parse.
	for i, f := range [][]byte{ok(one), ok(one, two), ok(two, one), ok(rawV3Entry("w\x00", page, 2*page)), v3File(0, rawV3Index(0), nil),
		tail(rawV3Entry("w\x00", 4*page, page)), tail(rawV3Entry("w\x00", 5*page, 0)), dataAfterIndex} {
		_, err := parseV3(f)
		require.NoError(t, err, "control %d", i)
	}
}

// fieldAt is where a FormatError must point.
type fieldAt struct {
	field string
	off   int64
	val   uint64
}

// anyVal marks a value the test does not pin (a checksum computed over the
// bytes).
const anyVal = ^uint64(0)

// requireAt checks that fe names the field, offset and value of want: the
// offsets are where docs/format.md places each field in the test's file.
func requireAt(t *testing.T, want fieldAt, fe *spec.FormatError) {
	t.Helper()
	require.NotEmpty(t, want.field, "no expected location for this case")
	assert.Equal(t, want.field, fe.Field)
	assert.Equal(t, want.off, fe.Off, "offset of %s", fe.Field)
	if want.val != anyVal {
		assert.Equal(t, want.val, fe.Val, "value of %s", fe.Field)
	}
}

// formatErrorFor finds, in err's tree (a failed load joins both slots'
// errors), the FormatError of the check that failed with want.
func formatErrorFor(err, want error) *spec.FormatError {
	var fe *spec.FormatError
	if errors.As(err, &fe) && errors.Is(fe, want) {
		return fe
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if fe := formatErrorFor(e, want); fe != nil {
				return fe
			}
		}
	case interface{ Unwrap() error }:
		return formatErrorFor(u.Unwrap(), want)
	}
	return nil
}

// TestV3VersionErrorReachable: a file from a newer writer, or from an older
// one whose entries lack copy_id, is reported with the version it carries,
// not only as "no commit", and is never read with the wrong entry layout.
func TestV3VersionErrorReachable(t *testing.T) {
	for _, v := range []uint32{3, 5} {
		f := spec.EncodeV3Header(4096)
		for pos := range 2 {
			s := f[pos*512 : pos*512+512]
			le.PutUint32(s[8:], v)
			fixSlot(s)
		}
		_, err := parseV3(f)
		var ve *spec.VersionError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, spec.VersionError{Got: v, Want: 4}, *ve)
		assert.ErrorIs(t, err, spec.ErrNoCommit)
	}
}

// TestV3DataChecksumField: the slot names the data checksum, an entry's
// CRC field holds DataChecksum of its bytes (XXH3, not CRC32C), and the
// streaming hasher agrees with the one-shot checksum at every split, so
// VerifyEntryData's chunked pass checks what the writer stored.
func TestV3DataChecksumField(t *testing.T) {
	assert.Equal(t, uint32(1), le.Uint32(spec.EncodeCommitSlot(spec.Commit{Generation: 1, PageSize: 4096})[44:]))
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	f, es := spectest.BuildV3(4096, []spectest.Weight{{Key: spec.Key{Weight: "w", Seed: 1}, Data: data}})
	require.Equal(t, spec.DataChecksum(data), es[0].CRC)
	require.NotEqual(t, spec.CRC32C(data), es[0].CRC)
	require.NoError(t, spec.VerifyEntryData(bytes.NewReader(f), es[0]))
	for _, cut := range []int{0, 1, 63, 64, 65, 240, 1024, 100_000, len(data)} {
		h := spec.NewDataHasher()
		h.Write(data[:cut])
		h.Write(data[cut:])
		require.Equal(t, spec.DataChecksum(data), h.Sum(), "split at %d", cut)
	}
	f[es[0].Offset+123] ^= 1
	require.ErrorIs(t, spec.VerifyEntryData(bytes.NewReader(f), es[0]), spec.ErrChecksum)
}

func TestProblemNames(t *testing.T) {
	assert.Equal(t, "ErrChecksum", spec.ProblemName(&spec.FormatError{Err: spec.ErrChecksum}))
	assert.Equal(t, "ErrUnsupportedVersion", spec.ProblemName(&spec.VersionError{Got: 1, Want: 2}))
	assert.Equal(t, "ErrCorrupt", spec.ProblemName(spec.ErrCorrupt))
	assert.Equal(t, "", spec.ProblemName(errIO))
	_, err := parseV3(spec.EncodeV3Header(4096))
	assert.Equal(t, []string{"ErrNoCommit"}, spec.ProblemNames(err))
	f := spec.EncodeV3Header(4096)
	f[600] ^= 1
	_, err = parseV3(f)
	assert.Equal(t, []string{"ErrNoCommit", "ErrChecksum"}, spec.ProblemNames(err))
}

// TestReadCommitSlotsBounds: two slots need exactly 1,024 bytes; a fresh
// header's slots are both "never committed", each error at its own slot's
// generation field.
func TestReadCommitSlotsBounds(t *testing.T) {
	h := spec.EncodeV3Header(4096)
	_, _, err := spec.ReadCommitSlots(bytes.NewReader(h), 2*spec.V3SlotSize-1)
	require.ErrorIs(t, err, spec.ErrTooSmall)
	_, errs, err := spec.ReadCommitSlots(bytes.NewReader(h), 2*spec.V3SlotSize)
	require.NoError(t, err)
	for pos, e := range errs {
		fe := formatErrorFor(e, spec.ErrNoCommit)
		require.NotNil(t, fe, "slot %d: %v", pos, e)
		requireAt(t, fieldAt{"generation", int64(pos)*spec.V3SlotSize + 16, 0}, fe)
	}
}

// A v3 name is the weight name, the separator and the bias name: two
// entries that share a weight name and differ in the bias name are two
// names, and only the same pair twice is a duplicate.
func TestV3DuplicateNameIsTheWholeName(t *testing.T) {
	for _, tc := range []struct {
		bias2 string
		dup   bool
	}{{"b2", false}, {"b1", true}} {
		index := spec.EncodeV3Index([]spec.Entry{
			{Key: spec.Key{Weight: "w", Bias: "b1"}, Offset: 4096, Size: 1},
			{Key: spec.Key{Weight: "w", Bias: tc.bias2}, Offset: 8192, Size: 1},
		})
		f := v3File(2, index, nil)
		_, err := spec.ParseV3(spec.Bytes(f), int64(len(f)))
		if tc.dup {
			require.ErrorIs(t, err, spec.ErrDuplicateName)
		} else {
			require.NoError(t, err)
		}
	}
}
