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
