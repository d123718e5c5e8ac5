package cache_test

import (
	"errors"
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

var errCrashed = errors.New("test: process crashed here")

// stopFS fails every mutating call from the n-th on (1-based), as if the
// process died just before it: calls that completed stay in the page cache
// (the process-crash model of docs/faults.md). Power loss is exercised by
// faultinject/crashpoint on the crash-simulating filesystem.
type stopFS struct {
	vfs.FS
	n, count int
	once     bool // fail only the n-th call, as an I/O error would
}

func (s *stopFS) step() error {
	s.count++
	if s.n > 0 && (s.count == s.n || !s.once && s.count > s.n) {
		return errCrashed
	}
	return nil
}

func (s *stopFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	if flag&os.O_CREATE != 0 && !isLockFile(name) {
		if err := s.step(); err != nil {
			return nil, err
		}
	}
	f, err := s.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &stopFile{File: f, s: s}, nil
}

func isLockFile(name string) bool { return len(name) > 5 && name[len(name)-5:] == ".lock" }

func (s *stopFS) Rename(a, b string) error {
	if err := s.step(); err != nil {
		return err
	}
	return s.FS.Rename(a, b)
}

func (s *stopFS) Remove(name string) error {
	if err := s.step(); err != nil {
		return err
	}
	return s.FS.Remove(name)
}

func (s *stopFS) SyncDir(dir string) error {
	if err := s.step(); err != nil {
		return err
	}
	return s.FS.SyncDir(dir)
}

type stopFile struct {
	vfs.File
	s *stopFS
}

func (f *stopFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.s.step(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *stopFile) Allocate(off, n int64) error {
	if err := f.s.step(); err != nil {
		return err
	}
	return f.File.Allocate(off, n)
}

func (f *stopFile) Sync() error {
	if err := f.s.step(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *stopFile) SyncData() error {
	if err := f.s.step(); err != nil {
		return err
	}
	return f.File.SyncData()
}

// committedNames parses path and returns the sorted names and seeds of its
// committed entries, or nil when there is no file.
func committedNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	v, err := spec.ParseV3(f, fi.Size())
	require.NoError(t, err, "G2: the file always holds a loadable commit")
	var out []string
	for _, e := range v.Entries {
		out = append(out, e.Key.Name()+"@"+itoa(int(e.Key.Seed)))
	}
	sort.Strings(out)
	return out
}

func namesOf(ks []spec.Key) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Name()+"@"+itoa(int(k.Seed)))
	}
	sort.Strings(out)
	return out
}

// G2: a process crash at every mutating call of a commit (append, create,
// compaction) leaves the previous committed index or the new one, complete:
// never neither, never a mix; and the next launch converges.
func TestG2CrashAtEveryStepOfACommit(t *testing.T) {
	before := append(keys(3, 1), key("gone", 1))
	after := append(keys(3, 1)[:2], key("w2", 2), key("new", 1)) // w2 re-packed, gone dropped, new added
	cases := []struct {
		name    string
		initial []spec.Key // nil: no file
		ratio   float64
		compact bool
	}{
		{"append", before, -1, false},
		{"create", nil, -1, false},
		{"compact-on-commit", before, 0.01, false},
		{"explicit-compact", before, -1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			completed := false
			for n := 1; !completed; n++ {
				require.Less(t, n, 200, "the commit must finish within 200 calls")
				path := tempPath(t)
				if tc.initial != nil {
					process(t, cache.Options{Path: path}, tc.initial)
				}
				old := committedNames(t, path)

				fsys := &stopFS{FS: vfs.OS(), n: n}
				c, err := cache.Open(cache.Options{Path: path, FS: fsys, CompactGarbageRatio: tc.ratio})
				require.NoError(t, err)
				require.NoError(t, c.InitializeForProgram("P"))
				for _, k := range after {
					pack(t, c, k) // correct bytes whatever fails (G8)
				}
				require.NoError(t, c.Invalidate("gone"))
				require.NoError(t, c.Finalize())
				if tc.compact {
					_ = c.Compact()
				}
				completed = fsys.count < n
				require.NoError(t, c.Close())

				got := committedNames(t, path)
				want := namesOf(after)
				if !completed {
					require.Contains(t, [][]string{old, want}, got, "crash before call %d", n)
				} else {
					require.Equal(t, want, got)
					t.Logf("crash points checked: %d", n-1)
				}
				s := process(t, cache.Options{Path: path}, after)
				s = process(t, cache.Options{Path: path}, after)
				require.Equal(t, uint64(len(after)), s.Hits, "converges after crash at %d", n)
			}
		})
	}
}

// After a failed commit, the entries it would have committed are never
// committed by this cache; when another process commits the same names, the
// next refresh takes theirs and this cache's next commit keeps them.
func TestFailedCommitYieldsToOtherWriters(t *testing.T) {
	path := tempPath(t)
	fsys := &stopFS{FS: vfs.OS()}
	c := open(t, cache.Options{Path: path, FS: fsys})
	w0, w1 := key("w0", 1), key("w1", 1)
	require.NoError(t, c.InitializeForProgram("P1"))
	pack(t, c, w0)
	fsys.n = fsys.count + 1 // the commit's first write fails
	require.NoError(t, c.Finalize())
	require.Error(t, c.Stats().CommitErr)
	fsys.n = 0

	process(t, cache.Options{Path: path}, []spec.Key{w0}) // another process commits w0
	require.NoError(t, c.InitializeForProgram("P2"))
	pack(t, c, w1)
	require.NoError(t, c.Finalize())
	require.NoError(t, c.Stats().CommitErr)

	s := process(t, cache.Options{Path: path}, []spec.Key{w0, w1})
	require.Equal(t, uint64(2), s.Hits, "w0 committed by the other process survives")
}

// v2 has no commit slot: its file is found through the footer at its end.
// A single failed write after the file grew (here: every mutating call of a
// commit that appends a new entry, one at a time) must not leave a file
// that every reader rejects, losing every saved entry without any crash:
// the writer ends the file with the last committed index again.
func TestV2FailedAppendKeepsFileReadable(t *testing.T) {
	saved := keys(2, 1)
	completed := false
	for n := 1; !completed; n++ {
		require.Less(t, n, 100)
		path := tempPath(t)
		opts := cache.Options{Path: path, Format: spec.FormatV2, CompactGarbageRatio: -1}
		process(t, opts, saved)

		fsys := &stopFS{FS: vfs.OS(), n: n, once: true}
		c, err := cache.Open(cache.Options{Path: path, Format: spec.FormatV2, FS: fsys, CompactGarbageRatio: -1})
		require.NoError(t, err)
		launch(t, c, "P", append(saved, key("new", 1)))
		completed = fsys.count < n
		failed := c.Stats().CommitErr != nil || c.Stats().FallbackErr != nil
		require.NoError(t, c.Close())

		s := process(t, cache.Options{Path: path, Format: spec.FormatV2}, saved)
		require.Equal(t, spec.LoadOK, s.Load, "failed call %d (commit failed: %v): %v", n, failed, s.LoadErr)
		require.Equal(t, uint64(len(saved)), s.Hits, "failed call %d", n)
		if completed {
			t.Logf("calls failed one at a time: %d", n-1)
		}
	}
}
