package spec_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// allocated is AllocatedBytes (memstats_test.go), where spec's own tests
// can use it too.
var allocated = spec.AllocatedBytes

// TestParseAllocationBoundedByFileSize is G7's allocation half: files whose
// counts and lengths claim gigabytes make the parsers allocate a small
// multiple of the real file size, never what is declared.
func TestParseAllocationBoundedByFileSize(t *testing.T) {
	const size = 4096
	v2 := func(indexStart uint64, count uint32, index []byte) []byte {
		f := make([]byte, size-spec.V2FooterSize-len(index))
		f = append(f, index...)
		return append(f, etFooter(indexStart, count, spec.V2Magic, 2)...)
	}
	nameLenMax := le.AppendUint32(nil, 1<<32-1)
	// An index of 169 minimal entries, the most a 4 KiB file can declare,
	// whose last entry is bad, so the parser allocates its worst case and
	// then fails.
	var full []byte
	for i := 0; len(full)+2*(spec.V2EntryFixedSize+1) <= size-spec.V2FooterSize; i++ {
		full = append(full, etEntry(string(rune('A'+i%26))+string(rune('a'+i/26)), 0, 0, 1)...)
	}
	full = append(full, etEntry("", 0, 0, 0)...)
	fullCount := uint32(len(full) / (spec.V2EntryFixedSize + 2))

	v3 := func(count uint64, indexLen uint64, index []byte) []byte {
		f := spec.EncodeV3Header(4096)
		off := uint64(len(f))
		f = append(f, index...)
		f = append(f, make([]byte, max(0, 2*size-len(f)))...)
		copy(f[512:], spec.EncodeCommitSlot(spec.Commit{Generation: 1, PageSize: 4096, IndexOff: off, IndexLen: indexLen, IndexCRC: spec.CRC32C(f[off:min(uint64(len(f)), off+indexLen)])}))
		return f
	}
	var v3full []byte
	v3full = append(v3full, "XPWCIDX3"...)
	v3full = le.AppendUint64(v3full, 4096/48)
	v3full = append(v3full, make([]byte, 4096-16)...)

	cases := []struct {
		name  string
		file  []byte
		parse func([]byte) error
	}{
		{"v2 count 2^32-1", v2(0, 1<<32-1, nil), func(b []byte) error { _, err := parseV2(b); return err }},
		{"v2 name_len 2^32-1", v2(size-spec.V2FooterSize-4, 1, nameLenMax), func(b []byte) error { _, err := parseV2(b); return err }},
		{"v2 most entries the file holds", v2(uint64(size-spec.V2FooterSize-len(full)), fullCount, full), func(b []byte) error { _, err := parseV2(b); return err }},
		{"v3 count 2^64-1", v3(0, 4096, append([]byte("XPWCIDX3"), le.AppendUint64(nil, 1<<64-1)...)), func(b []byte) error { _, err := parseV3(b); return err }},
		{"v3 index length 2^40", v3(0, 1<<40, nil), func(b []byte) error { _, err := parseV3(b); return err }},
		{"v3 most entries the file holds", v3(0, uint64(len(v3full)), v3full), func(b []byte) error { _, err := parseV3(b); return err }},
	}
	for _, tc := range cases {
		var err error
		n := allocated(func() { err = tc.parse(tc.file) })
		require.ErrorIs(t, err, spec.ErrCorrupt, tc.name)
		// Worst case: the index buffer plus one 80-byte Entry per minimal
		// record (24 bytes in v2, 48 in v3) and the name table.
		assert.LessOrEqual(t, n, uint64(6*len(tc.file)), "%s: %d bytes allocated for a %d-byte file", tc.name, n, len(tc.file))
		t.Logf("%s: %d bytes allocated, file %d bytes", tc.name, n, len(tc.file))
	}
	// The check can fail: a parse that allocated what the v2 count claims
	// would need 2^32 Entries.
	huge := allocated(func() { _ = make([]spec.Entry, 1<<16) })
	assert.Greater(t, huge, uint64(6*size))
}

// TestParseV2AllocationAtScale: a valid million-entry-sized index costs a
// bounded multiple of its size (the benchmark reports the exact ratio).
func TestParseAllocationValidFile(t *testing.T) {
	file, _ := v2Big(2000)
	var err error
	n := allocated(func() { _, err = parseV2(file) })
	require.NoError(t, err)
	idx := uint64(len(file)) - 2000*4096
	assert.LessOrEqual(t, n, 4*idx, "allocated %d for a %d-byte index", n, idx)
}

func v2Big(n int) ([]byte, []spec.Entry) {
	entries := make([]spec.Entry, n)
	for i := range entries {
		entries[i] = spec.Entry{Key: spec.Key{Weight: "layers." + string(rune('a'+i%26)) + "." + itoa(i) + ".weight", Seed: uint32(i)}, Offset: uint64(i) * 4096, Size: 100}
	}
	data := make([]byte, n*4096)
	return append(data, spec.EncodeV2Index(uint64(n)*4096, entries)...), entries
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

var _ = bytes.NewReader
