package runtime

import (
	goruntime "runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

// hitCache answers every look-up with a hit and allocates nothing: what a
// warm cache gives Backend.Init, without the cache's own allocations.
type hitCache struct{ lookUps int }

func (*hitCache) InitializeForProgram(string) error { return nil }
func (h *hitCache) LookUp(spec.Key) (cache.Handle, bool) {
	h.lookUps++
	return cache.Handle{}, true
}
func (*hitCache) ReserveSpace(int) ([]byte, error)                      { return nil, cache.ErrClosed }
func (*hitCache) LookUpOrInsert(spec.Key, []byte) (cache.Handle, error) { return cache.Handle{}, nil }
func (*hitCache) Bytes(cache.Handle) ([]byte, error)                    { return nil, cache.ErrClosed }
func (*hitCache) Finalize() error                                       { return nil }
func (*hitCache) Save() error                                           { return nil }
func (*hitCache) DeleteProgram(string) error                            { return nil }

// TestWarmInitAllocationBound holds what Backend.Init allocates itself on
// a warm launch (every layer a hit) of the 1,184-layer program to 16 bytes
// a layer, its handle, and a little: each new heap page is a fault in a
// fresh process (impl/cache's TestWarmLoadAllocationBound holds the cache's
// part). A layer record with room for bytes the backend keeps itself (40
// bytes a layer) failed it.
func TestWarmInitAllocationBound(t *testing.T) {
	p, err := Preset(PresetLlama1184, 1)
	require.NoError(t, err)
	c := &hitCache{}
	b, err := NewBackend(p, kernels.NewRegistry().Default(), c)
	require.NoError(t, err)
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	require.NoError(t, b.Init())
	goruntime.ReadMemStats(&after)
	require.Equal(t, p.NumLayers(), c.lookUps)
	require.Equal(t, p.NumLayers(), b.Stats().Hits)
	got := after.TotalAlloc - before.TotalAlloc
	require.LessOrEqual(t, got, uint64(16*p.NumLayers()+1<<10), "bytes allocated by a warm Init of %d layers", p.NumLayers())
}
