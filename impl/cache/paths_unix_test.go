//go:build unix

package cache_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// pathRow is one row of docs/paths.md: what sits at the cache path, and
// what a launch over three weights (two of them cached by the setups that
// write a cache) must do with it.
type pathRow struct {
	id string
	// setup makes the thing at path (in a fresh directory) and returns the
	// options to launch with; nil options FS means the OS.
	setup func(t *testing.T, path string) cache.Options
	load  spec.LoadOutcome
	hits  uint64
	heap  cache.HeapReason // reason of the misses' heap bytes, "" for none
	// untouched: the thing at the path (and a link's target) keeps every
	// byte, and no file appears beside it.
	untouched bool
	// link: the path is a symbolic link and must still be one afterwards.
	link bool
}

var pathKeys = keys(3, 1)

// writeCache commits the first two keys in format f at path.
func writeCache(t *testing.T, path string, f spec.Format) {
	t.Helper()
	process(t, cache.Options{Path: path, Format: f}, pathKeys[:2])
}

// damaged writes a v3 cache whose commit slots both fail their CRC.
func damaged(t *testing.T, path string) {
	t.Helper()
	writeCache(t, path, spec.FormatV3)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[100] ^= 0xff
	b[spec.V3SlotSize+100] ^= 0xff
	require.NoError(t, os.WriteFile(path, b, 0o640))
}

// executorchFile writes a v2 file as ExecuTorch's writer lays it out,
// holding the first two keys' packings.
func executorchFile(t *testing.T, path string) {
	t.Helper()
	var ws []spectest.Weight
	for _, k := range pathKeys[:2] {
		ws = append(ws, spectest.Weight{Key: k, Data: packed(k)})
	}
	b, _ := spectest.BuildV2(4096, ws)
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

var foreignBytes = append([]byte("\x7fELF\x02\x01\x01\x00"), bytes.Repeat([]byte{0x90}, 5000)...)

// behind puts what make creates at a target beside path and a link to it
// at path.
func behind(make func(t *testing.T, path string)) func(t *testing.T, path string) cache.Options {
	return func(t *testing.T, path string) cache.Options {
		target := filepath.Join(filepath.Dir(path), "target.xpwc")
		make(t, target)
		require.NoError(t, os.Symlink("target.xpwc", path))
		return cache.Options{Path: path}
	}
}

func pathRows() []pathRow {
	plain := func(make func(t *testing.T, path string)) func(t *testing.T, path string) cache.Options {
		return func(t *testing.T, path string) cache.Options {
			make(t, path)
			return cache.Options{Path: path}
		}
	}
	v3 := func(t *testing.T, p string) { writeCache(t, p, spec.FormatV3) }
	v2 := func(t *testing.T, p string) { writeCache(t, p, spec.FormatV2) }
	foreign := func(t *testing.T, p string) { require.NoError(t, os.WriteFile(p, foreignBytes, 0o755)) }
	return []pathRow{
		{id: "nothing", setup: plain(func(*testing.T, string) {}), load: spec.LoadMissing},
		{id: "our-v3", setup: plain(v3), load: spec.LoadOK, hits: 2},
		{id: "our-v2", setup: plain(v2), load: spec.LoadOK, hits: 2},
		{id: "executorch-v2", setup: plain(executorchFile), load: spec.LoadOK, hits: 2},
		{id: "executorch-v2-named-v3", setup: func(t *testing.T, p string) cache.Options {
			executorchFile(t, p)
			return cache.Options{Path: p, Format: spec.FormatV3}
		}, load: spec.LoadOtherFormat, hits: 2},
		{id: "our-v3-named-v2", setup: func(t *testing.T, p string) cache.Options {
			v3(t, p)
			return cache.Options{Path: p, Format: spec.FormatV2}
		}, load: spec.LoadOtherFormat, hits: 2},
		{id: "damaged-cache", setup: plain(damaged), load: spec.LoadRejected},
		{id: "foreign-file", setup: plain(foreign), load: spec.LoadRejected, heap: cache.HeapForeign, untouched: true},
		{id: "foreign-file-replace", setup: func(t *testing.T, p string) cache.Options {
			foreign(t, p)
			return cache.Options{Path: p, ReplaceForeign: true}
		}, load: spec.LoadRejected},
		{id: "link-to-v3", setup: behind(v3), load: spec.LoadOK, hits: 2, link: true},
		{id: "link-to-v2", setup: behind(v2), load: spec.LoadOK, hits: 2, link: true},
		{id: "link-to-executorch-v2", setup: behind(executorchFile), load: spec.LoadOK, hits: 2, link: true},
		{id: "link-to-damaged-cache", setup: behind(damaged), load: spec.LoadRejected, link: true},
		{id: "link-to-foreign-file", setup: behind(foreign), load: spec.LoadRejected, heap: cache.HeapForeign, untouched: true, link: true},
		{id: "dangling-link", setup: func(t *testing.T, p string) cache.Options {
			require.NoError(t, os.Symlink("target.xpwc", p))
			return cache.Options{Path: p}
		}, load: spec.LoadMissing, link: true},
		{id: "directory", setup: func(t *testing.T, p string) cache.Options {
			require.NoError(t, os.Mkdir(p, 0o755))
			return cache.Options{Path: p}
		}, load: spec.LoadFailed, heap: cache.HeapNotRegular, untouched: true},
		{id: "fifo", setup: func(t *testing.T, p string) cache.Options {
			require.NoError(t, syscall.Mkfifo(p, 0o600))
			return cache.Options{Path: p}
		}, load: spec.LoadFailed, heap: cache.HeapNotRegular, untouched: true},
		{id: "character-device", setup: func(t *testing.T, p string) cache.Options {
			// A node of its own (the null device's numbers), never a link
			// to /dev/null: a cache that wrongly replaced the device would
			// replace the system's. Making a node needs privilege.
			err := syscall.Mknod(p, syscall.S_IFCHR|0o600, 1<<8|3)
			if errors.Is(err, syscall.EPERM) {
				t.Skip("mknod needs privilege; the row runs where tests run as root (CI)")
			}
			require.NoError(t, err)
			return cache.Options{Path: p}
		}, load: spec.LoadFailed, heap: cache.HeapNotRegular, untouched: true},
		{id: "socket", setup: func(t *testing.T, p string) cache.Options {
			l, err := net.Listen("unix", p)
			require.NoError(t, err)
			t.Cleanup(func() { _ = l.Close() })
			return cache.Options{Path: p}
		}, load: spec.LoadFailed, heap: cache.HeapNotRegular, untouched: true},
		{id: "unreadable-file", setup: func(t *testing.T, p string) cache.Options {
			// EACCES from open, simulated: CI may run as root, which
			// reads any file whatever its mode.
			v3(t, p)
			return cache.Options{Path: p, FS: &hookFS{FS: vfs.OS(), open: func(name string, _ int) error {
				if name == p {
					return &fs.PathError{Op: "open", Path: name, Err: syscall.EACCES}
				}
				return nil
			}}}
		}, load: spec.LoadFailed, heap: cache.HeapOpenFailed, untouched: true},
		{id: "read-only-filesystem", setup: func(t *testing.T, p string) cache.Options {
			v3(t, p)
			return cache.Options{Path: p, FS: &hookFS{FS: vfs.OS(), open: func(name string, flag int) error {
				if flag&(os.O_CREATE|os.O_WRONLY|os.O_RDWR) != 0 {
					return &fs.PathError{Op: "open", Path: name, Err: syscall.EROFS}
				}
				return nil
			}}}
		}, load: spec.LoadOK, hits: 2, heap: cache.HeapReadOnly, untouched: true},
		{id: "read-only-option", setup: func(t *testing.T, p string) cache.Options {
			v3(t, p)
			return cache.Options{Path: p, ReadOnly: true}
		}, load: spec.LoadOK, hits: 2, heap: cache.HeapReadOnly, untouched: true},
		{id: "locked-by-peer", setup: func(t *testing.T, p string) cache.Options {
			// ExecuTorch's writer holds LOCK_EX on the data file (a second
			// open file description conflicts like another process).
			v3(t, p)
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			require.NoError(t, err)
			t.Cleanup(func() { _ = f.Close() })
			require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
			return cache.Options{Path: p}
		}, load: spec.LoadLocked, heap: cache.HeapLockBusy, untouched: true},
	}
}

// snapshot is what "untouched" compares: the directory's names and every
// regular file's mode and content hash, links not followed (a link's
// target is in the same directory). The cache's own lock file is left out:
// a launch that writes nothing may still create it.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".lock") {
			continue
		}
		p := filepath.Join(dir, de.Name())
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out[de.Name()] = v
	}
	return out
}

// TestPathTable: one subtest per row of docs/paths.md.
func TestPathTable(t *testing.T) {
	for _, row := range pathRows() {
		t.Run(row.id, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "weights.xpwc")
			opts := row.setup(t, path)
			before := snapshot(t, dir)

			s := process(t, opts, pathKeys) // checks every byte served
			require.Equal(t, row.load, s.Load, "load error: %v", s.LoadErr)
			require.Equal(t, row.hits, s.Hits)
			if row.heap != "" {
				require.Positive(t, s.HeapBytes[row.heap], "heap by reason: %v", s.HeapBytes)
			}
			if row.untouched {
				require.Equal(t, before, snapshot(t, dir), "something at or beside the path changed")
				return
			}
			if row.link {
				fi, err := os.Lstat(path)
				require.NoError(t, err)
				require.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link was replaced by a file")
			}
			// Written: the next launch hits everything, and the file
			// keeps the mode of what it replaced, or gets 0600.
			require.Equal(t, uint64(len(pathKeys)), process(t, opts, pathKeys).Hits)
			fi, err := os.Stat(path)
			require.NoError(t, err)
			want := cache.DefaultFileMode
			if m, ok := before[filepath.Base(path)]; ok && !row.link {
				want = modeOf(t, m)
			} else if m, ok := before["target.xpwc"]; ok {
				want = modeOf(t, m)
			}
			require.Equal(t, want, fi.Mode().Perm())
		})
	}
}

// modeOf reads the permission bits back from a snapshot value.
func modeOf(t *testing.T, v string) os.FileMode {
	t.Helper()
	s := strings.SplitN(v, " ", 2)[0]
	var m os.FileMode
	for i, c := range s[len(s)-9:] {
		if c != '-' {
			m |= 1 << (8 - i)
		}
	}
	return m
}

// TestPathTableMatchesDocs: the rows of docs/paths.md are the rows tested,
// in order.
func TestPathTableMatchesDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/paths.md")
	require.NoError(t, err)
	var doc []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(string(b), -1) {
		doc = append(doc, m[1])
	}
	var tested []string
	for _, row := range pathRows() {
		tested = append(tested, row.id)
	}
	require.Equal(t, tested, doc)
}
