package cache_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// A warm load into an empty cache adds the file's entries without looking
// each name up first, since the file gives each name once. A v3 file
// carried into a v2 cache is the exception: ("ab", "c") and ("a", "bc")
// are two names in v3 and one in v2, so the second displaces the first as
// a later load would (consistency checked, one entry served).
func TestCarriedV3NamesThatMeetInV2(t *testing.T) {
	path := tempPath(t)
	ks := []spec.Key{
		{Weight: "ab", Bias: "c", Seed: 1, Fingerprint: 1, Source: 1},
		{Weight: "a", Bias: "bc", Seed: 1, Fingerprint: 1, Source: 1},
	}
	process(t, cache.Options{Path: path, Format: spec.FormatV3}, ks)

	c := open(t, cache.Options{Path: path, Format: spec.FormatV2})
	require.NoError(t, c.InitializeForProgram("P"))
	require.NoError(t, c.Check())
	require.Equal(t, spec.LoadOtherFormat, c.Stats().Load)
	require.Equal(t, []string{"abc"}, c.Names())
}

// In a v2 cache the index finds an entry by the concatenation of its names
// alone, so a look-up still compares both names: the carried v3 entry
// ("a", "bc") does not serve ("ab", "c"), a different weight.
func TestV2CacheDoesNotServeAnotherSplitOfTheName(t *testing.T) {
	path := tempPath(t)
	stored := spec.Key{Weight: "a", Bias: "bc", Seed: 1, Fingerprint: 1, Source: 1}
	process(t, cache.Options{Path: path, Format: spec.FormatV3}, []spec.Key{stored})

	c := open(t, cache.Options{Path: path, Format: spec.FormatV2})
	require.NoError(t, c.InitializeForProgram("P"))
	_, ok := c.LookUp(spec.Key{Weight: "ab", Bias: "c", Seed: 1, Fingerprint: 1, Source: 1})
	require.False(t, ok, "served a different split of the name")
	_, ok = c.LookUp(stored)
	require.True(t, ok)
}
