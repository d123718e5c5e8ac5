package spec_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

func parseV3(b []byte) (*spec.V3File, error) {
	return spec.ParseV3(bytes.NewReader(b), int64(len(b)))
}

func TestV3RoundTrip(t *testing.T) {
	for _, page := range []int{4096, 16384, 65536} {
		b := spectest.NewV3(page)
		ws := spectest.Weights(6, 5000, 3)
		b.Save(ws[:4])
		b.Save(ws[4:])
		v, err := parseV3(b.File)
		require.NoError(t, err)
		require.Equal(t, b.Entries, v.Entries)
		assert.Equal(t, uint64(2), v.Commit.Generation)
		assert.Equal(t, 0, v.Slot)
		assert.Equal(t, page, v.PageSize)
		for i, e := range v.Entries {
			assert.Equal(t, ws[i].Key, e.Key)
			assert.Equal(t, ws[i].Data, b.File[e.Offset:e.End()])
			assert.NoError(t, spec.VerifyEntryData(bytes.NewReader(b.File), e))
			assert.Zero(t, e.Offset%uint64(page))
		}
		assert.Equal(t, uint64(6*5000), v.LiveBytes)
		assert.Equal(t, uint64(len(b.File))-uint64(page)-v.Commit.IndexLen-v.LiveBytes, v.GarbageBytes)
		idx := b.File[v.Commit.IndexOff : v.Commit.IndexOff+v.Commit.IndexLen]
		assert.Equal(t, idx, spec.EncodeV3Index(v.Entries))
	}
}

// TestV3NamesSeparateWeightAndBias: "ab"+"c", "a"+"bc" and bias-less "abc"
// are three entries (ExecuTorch's concatenation made them one, docs/bugs.md, "11. Key
// without separator").
func TestV3NamesSeparateWeightAndBias(t *testing.T) {
	ws := []spectest.Weight{
		{Key: spec.Key{Weight: "ab", Bias: "c"}, Data: []byte{1}},
		{Key: spec.Key{Weight: "a", Bias: "bc"}, Data: []byte{2}},
		{Key: spec.Key{Weight: "abc"}, Data: []byte{3}},
	}
	file, _ := spectest.BuildV3(4096, ws)
	v, err := parseV3(file)
	require.NoError(t, err)
	require.Len(t, v.Entries, 3)
	for i := range ws {
		assert.Equal(t, ws[i].Key, v.Entries[i].Key)
	}
}

// TestV3CommitProtocol walks the save protocol's crash points (G2): until
// the new slot is written the previous commit loads, a torn new slot falls
// back to it, and the new commit loads once its slot is in place.
func TestV3CommitProtocol(t *testing.T) {
	b := spectest.NewV3(4096)
	ws := spectest.Weights(4, 3000, 5)
	b.Save(ws[:2])
	gen1 := append([]byte(nil), b.File...)
	b.Save(ws[2:])
	gen2 := b.File

	// Data and index of generation 2 appended, slot not yet written.
	pending := append([]byte(nil), gen2...)
	copy(pending[:spec.V3SlotSize], gen1[:spec.V3SlotSize])
	v, err := parseV3(pending)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), v.Commit.Generation)
	assert.Len(t, v.Entries, 2)

	// The slot write torn at each 8-byte step inside its sector.
	for cut := 8; cut < spec.V3SlotSize; cut += 8 {
		torn := append([]byte(nil), pending...)
		copy(torn[:cut], gen2[:cut])
		v, err := parseV3(torn)
		require.NoError(t, err, "cut %d", cut)
		assert.Equal(t, uint64(1), v.Commit.Generation, "cut %d", cut)
		assert.ErrorIs(t, v.SlotErrors[0], spec.ErrCorrupt)
	}

	v, err = parseV3(gen2)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), v.Commit.Generation)
	assert.Len(t, v.Entries, 4)

	// Generation 3 goes to slot 1 and leaves generation 2 in slot 0.
	b.Save(spectest.Weights(1, 10, 6))
	v, err = parseV3(b.File)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), v.Commit.Generation)
	assert.Equal(t, 1, v.Slot)
	assert.Equal(t, gen2[:spec.V3SlotSize], b.File[:spec.V3SlotSize])
}

// TestV3FallsBackWhenNewestIndexIsCorrupt: bit rot in the newest index
// loads the previous commit and records why.
func TestV3FallsBackWhenNewestIndexIsCorrupt(t *testing.T) {
	b := spectest.NewV3(4096)
	b.Save(spectest.Weights(2, 100, 1))
	b.Save(spectest.Weights(3, 100, 2))
	v, err := parseV3(b.File)
	require.NoError(t, err)
	b.File[v.Commit.IndexOff+20] ^= 1
	v, err = parseV3(b.File)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), v.Commit.Generation)
	assert.ErrorIs(t, v.SlotErrors[0], spec.ErrChecksum)
	assert.NoError(t, v.SlotErrors[1])
}

func TestV3FreshHeaderHasNoCommit(t *testing.T) {
	h := spec.EncodeV3Header(16384)
	require.Len(t, h, spec.V3HeaderSize(16384))
	f, err := spec.DetectFormat(bytes.NewReader(h), int64(len(h)))
	require.NoError(t, err)
	assert.Equal(t, spec.FormatV3, f)
	_, err = parseV3(h)
	require.ErrorIs(t, err, spec.ErrNoCommit)
}

func TestVerifyEntryData(t *testing.T) {
	file, entries := spectest.BuildV3(4096, spectest.Weights(2, 100000, 1))
	r := bytes.NewReader(file)
	for _, e := range entries {
		require.NoError(t, spec.VerifyEntryData(r, e))
	}
	file[entries[1].Offset+99999] ^= 0x80
	require.NoError(t, spec.VerifyEntryData(bytes.NewReader(file), entries[0]))
	err := spec.VerifyEntryData(bytes.NewReader(file), entries[1])
	require.ErrorIs(t, err, spec.ErrChecksum)
	// Data past the end of the reader is reported, not read.
	e := entries[1]
	e.Size = uint64(len(file))
	require.ErrorIs(t, spec.VerifyEntryData(bytes.NewReader(file), e), spec.ErrTooSmall)
}

func TestDetectFormat(t *testing.T) {
	v2, _ := spectest.BuildV2(4096, spectest.Weights(1, 10, 1))
	v3, _ := spectest.BuildV3(4096, spectest.Weights(1, 10, 1))
	tornSlot0 := append([]byte(nil), v3...)
	clear(tornSlot0[:spec.V3SlotSize])
	cases := []struct {
		name string
		file []byte
		want spec.Format
		err  error
	}{
		{"v2", v2, spec.FormatV2, nil},
		{"v3", v3, spec.FormatV3, nil},
		{"v3 slot 0 torn", tornSlot0, spec.FormatV3, nil},
		{"empty", nil, spec.FormatUnknown, spec.ErrTooSmall},
		{"garbage", bytes.Repeat([]byte{0xCC}, 1024), spec.FormatUnknown, spec.ErrBadMagic},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := spec.DetectFormat(bytes.NewReader(tc.file), int64(len(tc.file)))
			assert.Equal(t, tc.want, f)
			assert.Equal(t, tc.want.String(), f.String())
			if tc.err == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.err)
			}
		})
	}
}

// TestV3TruncationLoadsAnOlderCommitOrFails: a file cut anywhere (a copy
// interrupted, a filesystem losing the tail) never loads the commit whose
// bytes it lost; once the cut spares generation 1's index, generation 1
// loads (G2: the previous commit or the new one, never a mix).
func TestV3TruncationLoadsAnOlderCommitOrFails(t *testing.T) {
	b := spectest.NewV3(4096)
	b.Save(spectest.Weights(2, 100, 1))
	v1, err := parseV3(b.File)
	require.NoError(t, err)
	gen1End := v1.Commit.IndexOff + v1.Commit.IndexLen
	b.Save(spectest.Weights(3, 100, 2))
	for n := 0; n < len(b.File); n++ {
		v, err := parseV3(b.File[:n])
		if uint64(n) < gen1End {
			require.ErrorIs(t, err, spec.ErrCorrupt, "cut at %d", n)
			continue
		}
		require.NoError(t, err, "cut at %d", n)
		require.Equal(t, uint64(1), v.Commit.Generation, "cut at %d", n)
		require.Len(t, v.Entries, 2)
	}
}

// TestDetectFormatBounds: DetectFormat at its exact bounds. The v3 magic
// counts in slot 0 or slot 1 only (not at 1024), and only when all eight
// bytes are in the file; a v2 file can be as short as its footer; a file
// that is neither reports ErrBadMagic at the v2 magic's offset, size-8.
func TestDetectFormatBounds(t *testing.T) {
	v2Tail := func(size int) []byte {
		b := make([]byte, size)
		le.PutUint32(b[size-8:], spec.V2Magic)
		return b
	}
	at := func(size, off int) []byte {
		b := make([]byte, size)
		copy(b[off:], spec.V3SlotMagic)
		return b
	}
	for _, tc := range []struct {
		name string
		file []byte
		want spec.Format
		err  error
		off  int64
	}{
		{"v3 magic in slot 1, file ends after it", at(520, 512), spec.FormatV3, nil, 0},
		{"v3 magic in slot 1 cut by one byte", at(519, 512), spec.FormatUnknown, spec.ErrBadMagic, 511},
		{"v3 magic at 1024", at(2048, 1024), spec.FormatUnknown, spec.ErrBadMagic, 2040},
		{"v2, footer only", v2Tail(spec.V2FooterSize), spec.FormatV2, nil, 0},
		{"19 bytes", v2Tail(19), spec.FormatUnknown, spec.ErrTooSmall, 0},
		{"foreign", make([]byte, 100), spec.FormatUnknown, spec.ErrBadMagic, 92},
	} {
		got, err := spec.DetectFormat(bytes.NewReader(tc.file), int64(len(tc.file)))
		require.Equal(t, tc.want, got, tc.name)
		if tc.err == nil {
			require.NoError(t, err, tc.name)
			continue
		}
		require.ErrorIs(t, err, tc.err, tc.name)
		var fe *spec.FormatError
		require.ErrorAs(t, err, &fe, tc.name)
		require.Equal(t, tc.off, fe.Off, tc.name)
	}
}

// TestParseV3IntoAllocatesNoV3File: ParseV3Into fills the caller's V3File
// as ParseV3 returns one, also when it falls back to the older commit (the
// newest index rotted), with one allocation fewer: the V3File, which a
// warm load keeps on its stack. Storing f beyond the call fails it.
func TestParseV3IntoAllocatesNoV3File(t *testing.T) {
	b := spectest.NewV3(4096)
	ws := spectest.Weights(6, 5000, 3)
	b.Save(ws[:4])
	b.Save(ws[4:])
	newest, err := parseV3(b.File)
	require.NoError(t, err)
	rotten := bytes.Clone(b.File)
	rotten[newest.Commit.IndexOff+20] ^= 1
	older, err := parseV3(rotten)
	require.NoError(t, err)
	for name, file := range map[string][]byte{"newest": b.File, "fallback": rotten} {
		r, size := bytes.NewReader(file), int64(len(file))
		want, err := spec.ParseV3(r, size)
		require.NoError(t, err, name)
		var got spec.V3File
		require.NoError(t, spec.Parser{}.ParseV3Into(&got, r, size), name)
		require.Equal(t, *want, got, name)
		// An error (both indexes rotten: after a parse of each) leaves
		// *f as it was.
		bad := bytes.Clone(rotten)
		bad[older.Commit.IndexOff+20] ^= 1
		kept := got
		require.ErrorIs(t, spec.Parser{}.ParseV3Into(&got, bytes.NewReader(bad), size), spec.ErrChecksum, name)
		require.Equal(t, kept, got, name)
		heap := testing.AllocsPerRun(20, func() { _, _ = spec.ParseV3(r, size) })
		stack := testing.AllocsPerRun(20, func() {
			var v spec.V3File
			_ = spec.Parser{}.ParseV3Into(&v, r, size)
		})
		require.Equal(t, heap-1, stack, name)
	}
	require.Equal(t, uint64(1), older.Commit.Generation, "the rotten file loads its older commit")
}
