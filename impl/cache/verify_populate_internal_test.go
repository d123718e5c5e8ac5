package cache

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// The verifying walk populates its mapping before it checks an entry:
// every entry it checks lies in the populated range, which ends no further
// than its lead past that entry (rounded up to a huge page), and grows in
// more than one call over a file of many leads.
func TestVerifyAheadPopulatesBeforeItChecks(t *testing.T) {
	const n, size = 400, 20 << 10 // about 8 MiB: four huge pages
	path := aheadFile(t, n)
	var mu sync.Mutex
	var bad []string
	var a *aheadWalk
	hook := func(e *entry) {
		// The walk's goroutine: its own fields are safe to read here.
		i := a.index(e)
		end := a.at[i].off + a.at[i].size
		limit := min(a.popEnd, (end+a.popLead+vfs.HugePageSize-1)/vfs.HugePageSize*vfs.HugePageSize)
		if a.pop != nil && (a.populated < end || a.populated > limit) {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("entry %d ends at %d, populated to %d (at most %d)", i, end, a.populated, limit))
			mu.Unlock()
		}
	}
	c, err := Open(Options{Path: path, Format: spec.FormatV3, VerifyData: VerifyOnCompute})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	c.aheadChecked, c.aheadWindow = hook, 3*size
	require.NoError(t, c.InitializeForProgram("P"))
	hs := make([]Handle, n)
	for i, k := range aheadKeys(n) {
		h, hit := c.LookUp(k)
		require.True(t, hit, "key %d", i)
		hs[i] = h
	}
	if _, ok := c.maps[0].(vfs.Populater); !ok {
		t.Skip("mappings of this OS cannot be populated")
	}
	c.mu.Lock()
	c.startWalks()
	a = c.prefaults[0].ahead
	c.mu.Unlock()
	// No compute: the walk checks its window, waits aheadPatience, then
	// checks the rest without a window, its lead unchanged.
	waitWalks(c)
	require.Equal(t, uint64(n), c.Stats().VerifiedAhead)
	for _, h := range hs {
		_, err := c.Bytes(h)
		require.NoError(t, err)
	}
	require.NoError(t, a.popErr)
	require.Greater(t, a.popCalls, 2, "the walk populated in fewer calls than its lead divides the file into")
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, bad)
}
