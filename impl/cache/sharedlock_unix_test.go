//go:build unix

package cache_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
)

// The data-file lock every xpwc descriptor and mapping holds is shared, so
// xpwc processes keep their concurrency: while one cache has the file
// loaded and mapped, another appends to it and commits (no heap, no busy
// lock), the first one's next program loads that commit, and all the while
// an ExecuTorch writer's LOCK_EX|LOCK_NB is refused. Two caches on one path
// are two open file descriptions, which flock treats as two processes.
func TestXpwcReaderDoesNotBlockXpwcWriter(t *testing.T) {
	if os.Getenv("XPWC_ET_PEER") != "" {
		t.Skip()
	}
	opts := cache.Options{Path: tempPath(t), CompactGarbageRatio: -1} // as in TestETWriterLockedOutWhileMapped
	ks := keys(3, 1)
	process(t, opts, ks[:2])

	reader := open(t, opts)
	require.Equal(t, 2, launch(t, reader, "R", ks[:2]), "the reader maps the committed entries")
	require.False(t, probeExclusive(t, opts.Path))

	writer := open(t, opts)
	require.Equal(t, 2, launch(t, writer, "W", ks))
	s := writer.Stats()
	require.Equal(t, uint64(1), s.Commits, "the writer appended and committed while the reader held the file")
	require.Empty(t, s.HeapBytes)
	require.False(t, probeExclusive(t, opts.Path))

	require.Equal(t, 3, launch(t, reader, "R2", ks), "the reader's next program loads the writer's commit")
}
