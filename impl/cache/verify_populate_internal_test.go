package cache

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/vfs"
)

// The verifying walk populates its mapping before it checks an entry:
// every entry it checks lies in the populated range, which ends no further
// than its lead past that entry (rounded up to a huge page), and grows in
// more than one call over a file larger than the lead.
func TestVerifyAheadPopulatesBeforeItChecks(t *testing.T) {
	const n, size = 400, 20 << 10 // about 8 MiB: four huge pages, the lead 480 KiB
	path := aheadFile(t, n)
	var mu sync.Mutex
	var bad []string
	var c *Cache
	hook := func(e *entry) {
		// The walk's goroutine, after it took c.mu once: its own fields
		// and the walks started are safe to read here.
		a := c.prefaults[0].ahead
		i := a.index(e)
		end := a.at[i].off + a.at[i].size
		limit := min(a.popEnd, (end+populateLead*a.popStep+vfs.HugePageSize-1)/vfs.HugePageSize*vfs.HugePageSize)
		if a.pop != nil && (a.populated < end || a.populated > limit) {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("entry %d ends at %d, populated to %d (at most %d)", i, end, a.populated, limit))
			mu.Unlock()
		}
	}
	// No compute: the walk checks its window, waits aheadPatience, then
	// checks the rest without a window, its lead unchanged.
	c, hs := openAheadWindow(t, path, n, 3*size, hook)
	if _, ok := c.maps[0].(vfs.Populater); !ok {
		t.Skip("mappings of this OS cannot be populated")
	}
	waitWalks(c)
	require.Equal(t, uint64(n), c.Stats().VerifiedAhead)
	for _, h := range hs {
		_, err := c.Bytes(h)
		require.NoError(t, err)
	}
	a := c.prefaults[0].ahead
	require.NoError(t, a.popErr)
	require.Greater(t, a.popCalls, 2, "the walk populated in fewer calls than its lead divides the file into")
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, bad)
}
