//go:build unix

package cache_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// staleStatFS answers Stat of one path with what was there before: the
// state a process sees when the path is swapped between its stat and its
// open (another program replaced the file by a FIFO in that window).
type staleStatFS struct {
	vfs.FS
	path string
	was  os.FileInfo
}

func (s *staleStatFS) Stat(name string) (os.FileInfo, error) {
	if name == s.path {
		return s.was, nil
	}
	return s.FS.Stat(name)
}

// A FIFO that replaces the cache file after the cache looked at the path
// and before it opened it is still refused: the open does not block
// (O_NONBLOCK) and the open file is checked (fstat), so nothing is read
// from it and nothing is renamed over it.
func TestPathSwappedForFIFOAfterStat(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "weights.xpwc")
	writeCache(t, path, spec.FormatV3)
	was, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Remove(path))
	require.NoError(t, syscall.Mkfifo(path, 0o600))

	opts := cache.Options{Path: path, FS: &staleStatFS{FS: vfs.OS(), path: path, was: was}}
	done := make(chan cache.Stats, 1)
	go func() { done <- process(t, opts, pathKeys) }()
	var s cache.Stats
	select {
	case s = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the launch blocked on the FIFO")
	}
	require.ErrorIs(t, s.LoadErr, cache.ErrNotRegular)
	require.Positive(t, s.HeapBytes[cache.HeapNotRegular], "heap by reason: %v", s.HeapBytes)
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "the FIFO was replaced")
}
