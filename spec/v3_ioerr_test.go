package spec_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// failRange is a ReaderAt over a file whose reads touching [lo, hi) fail
// with errIO: a disk that cannot read one index block.
type failRange struct {
	r      *bytes.Reader
	lo, hi int64
}

func (f failRange) ReadAt(p []byte, off int64) (int, error) {
	if off < f.hi && off+int64(len(p)) > f.lo {
		return 0, errIO
	}
	return f.r.ReadAt(p, off)
}

// twoCommits is a v3 file with generation 1 (two weights) in slot 1 and
// generation 2 (three weights) in slot 0.
func twoCommits(t *testing.T) ([]byte, spec.Commit, spec.Commit) {
	b := spectest.NewV3(4096)
	b.Save(spectest.Weights(2, 100, 1))
	b.Save(spectest.Weights(3, 100, 2))
	commits, errs, err := spec.ReadCommitSlots(bytes.NewReader(b.File), int64(len(b.File)))
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Equal(t, uint64(2), commits[0].Generation)
	return b.File, commits[0], commits[1]
}

// TestV3IOErrorOnNewestIndexIsNotFallback: only corruption of the newest
// commit may load the older one. Falling back on a read error made a cache
// load generation g-1 and its next compaction rewrite the file without the
// entries generation g had committed (G2, G8). The error comes back as the
// I/O error it is, never as corruption.
func TestV3IOErrorOnNewestIndexIsNotFallback(t *testing.T) {
	file, newest, _ := twoCommits(t)
	lo := int64(newest.IndexOff)
	hi := lo + int64(newest.IndexLen)
	for _, tc := range []struct {
		name   string
		lo, hi int64
	}{
		{"whole index", lo, hi},
		{"first byte", lo, lo + 1},
		{"last byte", hi - 1, hi},
	} {
		r := failRange{bytes.NewReader(file), tc.lo, tc.hi}
		v, err := spec.ParseV3(r, int64(len(file)))
		require.Error(t, err, tc.name)
		assert.Nil(t, v, tc.name)
		assert.ErrorIs(t, err, errIO, tc.name)
		assert.NotErrorIs(t, err, spec.ErrCorrupt, "%s: an I/O error is not corruption", tc.name)
	}
}

// TestV3IOErrorOnOlderIndexAfterCorruptNewest: the newest index is damaged
// and the older one cannot be read. Whether the older commit is loadable is
// unknown, so the answer is the I/O error, not the newest index's
// corruption (which would make a cache discard a file it may still use).
func TestV3IOErrorOnOlderIndexAfterCorruptNewest(t *testing.T) {
	file, newest, older := twoCommits(t)
	file[newest.IndexOff+20] ^= 1
	r := failRange{bytes.NewReader(file), int64(older.IndexOff), int64(older.IndexOff + older.IndexLen)}
	_, err := spec.ParseV3(r, int64(len(file)))
	require.ErrorIs(t, err, errIO)
	assert.NotErrorIs(t, err, spec.ErrCorrupt)

	// Readable, the older commit loads and the newest's damage is recorded.
	v, err := spec.ParseV3(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	assert.Equal(t, uint64(1), v.Commit.Generation)
	assert.ErrorIs(t, v.SlotErrors[0], spec.ErrChecksum)
}

// TestV3IOErrorOnOlderIndexNotNeeded: a read error in an index that is not
// needed does not matter.
func TestV3IOErrorOnOlderIndexNotNeeded(t *testing.T) {
	file, _, older := twoCommits(t)
	r := failRange{bytes.NewReader(file), int64(older.IndexOff), int64(older.IndexOff + older.IndexLen)}
	v, err := spec.ParseV3(r, int64(len(file)))
	require.NoError(t, err)
	assert.Equal(t, uint64(2), v.Commit.Generation)
	assert.Len(t, v.Entries, 3)
}

// TestV3ChecksumBeforeContent: the index CRC is computed in the decoding
// pass, but a damaged index still reports ErrChecksum whatever check its
// damage would fail, including damage that stops decoding early, and the
// sum is right across many window refills (an index of about 100 KiB).
func TestV3ChecksumBeforeContent(t *testing.T) {
	f, _ := spectest.SparseV3(1200, 4096, 100)
	idx := f.Parts[1].Data
	const window = 8<<10 + 64 // spec's minWindow: refills at about these
	require.Greater(t, len(idx), 5*window)
	_, err := spec.ParseV3(f, f.Size)
	require.NoError(t, err)
	for _, at := range []int{0, 8, 16, window - 1, window, window + 1, 3 * window, len(idx) - 1} {
		for _, bit := range []byte{1, 0x80} {
			damaged := append([]byte(nil), idx...)
			damaged[at] ^= bit
			g := &spectest.SparseFile{Size: f.Size, Parts: []spectest.Part{f.Parts[0], {Off: f.Parts[1].Off, Data: damaged}}}
			_, err := spec.ParseV3(g, g.Size)
			require.ErrorIs(t, err, spec.ErrChecksum, "byte %d bit %#x", at, bit)
		}
	}
	// The same damage with its CRC fixed reports the check it fails.
	b := spectest.NewV3(4096)
	b.Save(spectest.Weights(3, 100, 1))
	v, err := parseV3(b.File)
	require.NoError(t, err)
	b.File[v.Commit.IndexOff] ^= 1 // magic
	_, err = parseV3(b.File)
	require.ErrorIs(t, err, spec.ErrChecksum)
	spectest.FixV3Checksums(b.File)
	_, err = parseV3(b.File)
	require.ErrorIs(t, err, spec.ErrBadMagic)
}
