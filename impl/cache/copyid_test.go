package cache_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// copyIDs reads the copy identity of every entry of the v3 file at path.
func copyIDs(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	v, err := spec.ParseV3(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	ids := map[string]uint64{}
	for _, e := range v.Entries {
		ids[e.Key.Weight] = e.CopyID
	}
	return ids
}

// TestRepackGetsNewCopyID: a re-pack of a packing whose bytes a foreign
// write changed has the same key, size and CRC as the copy it replaces; its
// copy identity is what differs, so no tombstone or mapping of the changed
// copy can be taken for it (G3). Loaded copies keep theirs, and so does a
// compaction, which moves bytes without making new copies.
func TestRepackGetsNewCopyID(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), VerifyData: cache.VerifyOnFirstUse}
	ks := keys(3, 1)
	process(t, opts, ks)
	before := copyIDs(t, opts.Path)
	require.Len(t, before, 3)
	for n, id := range before {
		assert.NotZero(t, id, n)
	}
	assert.NotEqual(t, before["w0"], before["w1"])

	b, err := os.ReadFile(opts.Path)
	require.NoError(t, err)
	v, err := spec.ParseV3(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	for _, e := range v.Entries {
		if e.Key.Weight == "w1" {
			b[e.Offset] ^= 0xFF // a foreign write into w1's bytes
		}
	}
	require.NoError(t, os.WriteFile(opts.Path, b, 0o600))

	s := process(t, opts, ks)
	require.Equal(t, uint64(1), s.Corrupt)
	after := copyIDs(t, opts.Path)
	assert.NotEqual(t, before["w1"], after["w1"], "the re-pack is a new copy")
	assert.Equal(t, before["w0"], after["w0"], "a loaded copy keeps its identity")
	assert.Equal(t, before["w2"], after["w2"])

	c := open(t, opts)
	require.NoError(t, c.Compact())
	require.NoError(t, c.Close())
	assert.Equal(t, after, copyIDs(t, opts.Path), "a compaction carries identities over")
}

// entryBytes returns the bytes the v3 file at path lists for weight w, and
// whether they match the index's checksum.
func entryBytes(t *testing.T, path, w string) (data []byte, intact bool, copyID uint64) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	v, err := spec.ParseV3(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	for _, e := range v.Entries {
		if e.Key.Weight == w {
			data = b[e.Offset:e.End()]
			return data, spec.VerifyEntryData(bytes.NewReader(b), e) == nil, e.CopyID
		}
	}
	t.Fatalf("%s lists no %s", path, w)
	return nil, false, 0
}

// TestCompactionCopiesTheFileAtThePath: a compaction keeps each committed
// copy's identity, which another instance's refresh trusts to keep its own
// mapping of that copy. So the bytes copied are those of the file at the
// path, not the committer's mapping of an older file, which a foreign write
// to the file at the path did not reach: copied from there, an instance
// mapping the changed bytes would keep them under an identity whose bytes
// in the file are intact, and miss in a launch owed convergence (G3; the
// explorer's counterexample at two names, scenario
// g3-compaction-copies-the-file-at-the-path).
func TestCompactionCopiesTheFileAtThePath(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), VerifyData: cache.VerifyOnFirstUse}
	ks := keys(2, 1)
	process(t, opts, ks)
	a := open(t, opts)
	launch(t, a, "P", ks) // a maps the first file

	other, err := cache.Open(opts)
	require.NoError(t, err)
	require.NoError(t, other.Compact()) // a second file at the path, same copies
	require.NoError(t, other.Close())

	_, _, id := entryBytes(t, opts.Path, "w1")
	b, err := os.ReadFile(opts.Path)
	require.NoError(t, err)
	v, err := spec.ParseV3(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	f, err := os.OpenFile(opts.Path, os.O_RDWR, 0)
	require.NoError(t, err)
	for _, e := range v.Entries {
		if e.Key.Weight == "w1" {
			_, err = f.WriteAt([]byte{b[e.Offset] ^ 0xFF}, int64(e.Offset)) // a foreign write, in place
			require.NoError(t, err)
		}
	}
	require.NoError(t, f.Close())
	changed, intact, _ := entryBytes(t, opts.Path, "w1")
	require.False(t, intact)
	changed = bytes.Clone(changed)

	require.NoError(t, a.Compact())
	got, intact, gotID := entryBytes(t, opts.Path, "w1")
	assert.Equal(t, id, gotID, "a compaction carries the identity over")
	assert.False(t, intact, "the copy is of the file at the path, changed bytes included (caught by their checksum, G1)")
	assert.True(t, bytes.Equal(changed, got), "the new file holds the changed bytes of the file at the path")
}
