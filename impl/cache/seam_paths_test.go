//go:build unix

package cache_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// Following links and setting modes are part of the filesystem seam, so a
// cache keeps both promises through the error-injecting wrapper too (the
// wrapper is how every fault test reaches the OS): a link at the path stays
// a link, and the new file gets exactly Options.FileMode whatever the
// umask. When these were optional extras of vfs.OS, the wrapper hid them and
// the commit renamed a regular file over the link.
func TestLinkAndModeThroughErrorFS(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "weights.xpwc")
	require.NoError(t, os.Symlink("real.xpwc", link))
	fsys := errorfs.Wrap(vfs.OS(), errorfs.None)
	opts := cache.Options{Path: link, FS: fsys, FileMode: 0o604}
	ks := keys(2, 1)
	process(t, opts, ks)

	dest, err := os.Readlink(link)
	require.NoError(t, err, "the link must stay a link")
	require.Equal(t, "real.xpwc", dest)
	require.Equal(t, os.FileMode(0o604), fileInfo(t, filepath.Join(dir, "real.xpwc")).Mode().Perm())
	require.Equal(t, uint64(2), process(t, opts, ks).Hits)
}

// The crash-simulating filesystem keeps modes: a new cache file gets
// Options.FileMode, a replacement of a damaged cache keeps the mode of the
// file it replaces, and crashes keep both.
func TestModesOnCrashFS(t *testing.T) {
	fsys := crashfs.New(crashfs.Options{})
	require.NoError(t, fsys.MkdirAll("/c"))
	opts := cache.Options{Path: "/c/w.xpwc", FS: fsys}
	ks := keys(2, 1)
	process(t, opts, ks)
	fi, err := fsys.Stat(opts.Path)
	require.NoError(t, err)
	require.Equal(t, cache.DefaultFileMode, fi.Mode().Perm())

	// Damage both commit slots (magics kept: still a cache file) and give
	// the file another mode; the replacement keeps it.
	f, err := fsys.OpenFile(opts.Path, os.O_RDWR, 0)
	require.NoError(t, err)
	for _, off := range []int64{spec.V3SlotSize - 4, 2*spec.V3SlotSize - 4} {
		_, err := f.WriteAt(make([]byte, 4), off)
		require.NoError(t, err)
	}
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	require.NoError(t, fsys.Chmod(opts.Path, 0o640))
	require.Equal(t, spec.LoadRejected, process(t, opts, ks).Load)
	fi, err = fsys.Stat(opts.Path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	after := fsys.PowerLoss(1)
	fi, err = after.Stat(opts.Path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}
