package spec

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestEntriesGrowPastPrealloc: an index with more entries than the
// decoders preallocate for (preallocEntries) parses whole, and its Entries
// grow in one step to the declared count, not in append's quarter steps
// nor past it: what the parse allocates is at most the preallocated
// Entries, one buffer for count of them (up to half again for the
// allocator's rounding), the names, the name check's 20 bytes an entry
// (ParseV3's documented bound; ParseV2 shares the check), the read buffer
// (the whole index, read with one read, up to wholeRange) and 128 KiB for
// the rest.
func TestEntriesGrowPastPrealloc(t *testing.T) {
	entry := uint64(unsafe.Sizeof(Entry{}))
	for _, n := range []int{preallocEntries + 1, 2 * preallocEntries} {
		entries, _ := distinctNames(n)
		var names uint64
		for i := range entries {
			names += uint64(len(entries[i].Key.Weight))
		}
		// Empty entries at offset 0, before one page of data.
		file := append(make([]byte, 4096), EncodeV2Index(4096, entries)...)
		var f *V2File
		var err error
		got := AllocatedBytes(func() { f, err = ParseV2(bytes.NewReader(file), int64(len(file))) })
		require.NoError(t, err)
		require.Len(t, f.Entries, n)
		index := uint64(len(file) - 4096)
		bound := entry*(preallocEntries+uint64(n)*3/2) + names + 20*uint64(n) + min(index, wholeRange) + 128<<10
		require.LessOrEqual(t, got, bound, "%d entries", n)
		t.Logf("%d entries: %d bytes allocated, bound %d", n, got, bound)
	}
}
