package cache_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
)

// TestMappingsOnce: an instance whose next init loads another process's
// commit maps only the copies it does not hold, so every copy it maps is
// mapped once (G5, I7), its own committed ones included; each copy is
// listed under its name.
func TestMappingsOnce(t *testing.T) {
	path := tempPath(t)
	ks := keys(3, 1)
	a := open(t, cache.Options{Path: path, DisablePrefault: true})
	launch(t, a, "P1", ks[:2])
	b := open(t, cache.Options{Path: path, DisablePrefault: true})
	launch(t, b, "P1", ks)
	require.NoError(t, b.Close())
	require.NoError(t, a.InitializeForProgram("P2"))
	for _, k := range ks {
		_, hit := pack(t, a, k)
		require.True(t, hit, "%s: A holds its own copies and loaded B's", k.Weight)
	}
	got := a.Mappings()
	require.Len(t, got, 3, "%v", got)
	for i, m := range got {
		require.Equal(t, ks[i].Weight+ks[i].Bias, m.Name)
		require.Equal(t, 1, m.Maps, "%s", m.Name)
		require.NotZero(t, m.Copy, "%s: a v3 copy has an identity", m.Name)
	}
}
