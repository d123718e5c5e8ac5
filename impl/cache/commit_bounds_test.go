package cache_test

import (
	"bytes"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// A v2 commit of nothing removes the file (v2 cannot express an empty
// index) and makes the removal durable by syncing the directory; it counts
// as a commit. The removal of a file that is already gone is that commit
// too. A failure to remove the file or to sync the directory is the save's
// error (I12): no commit is counted, and a file that was not removed still
// serves the next process.
func TestV2EmptyCommitRemovesFile(t *testing.T) {
	ks := keys(2, 1)
	for _, tc := range []struct {
		name string
		fail func(errorfs.Op, string) error // nil: no failure
		err  error                          // the save's error; nil: committed
		kept bool                           // the file is still there
	}{
		{"removed", nil, nil, false},
		{"already gone", func(op errorfs.Op, path string) error {
			if op.Kind == errorfs.OpRemove && op.Path == path {
				_ = os.Remove(path) // as if another hand had removed it first
				return &errorfs.Error{Op: op, Err: syscall.ENOENT}
			}
			return nil
		}, nil, false},
		{"remove fails", func(op errorfs.Op, path string) error {
			if op.Kind == errorfs.OpRemove && op.Path == path {
				return &errorfs.Error{Op: op, Err: syscall.EIO}
			}
			return nil
		}, syscall.EIO, true},
		{"directory sync fails", func(op errorfs.Op, _ string) error {
			if op.Kind == errorfs.OpSyncDir {
				return &errorfs.Error{Op: op, Err: syscall.EIO}
			}
			return nil
		}, syscall.EIO, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), Format: spec.FormatV2, CompactGarbageRatio: -1}
			process(t, opts, ks)
			inj := &pathFails{path: opts.Path, fail: tc.fail}
			c := open(t, cache.Options{Path: opts.Path, Format: opts.Format, CompactGarbageRatio: -1, FS: errorfs.Wrap(vfs.OS(), inj)})
			require.NoError(t, c.InitializeForProgram("P"))
			require.NoError(t, c.InvalidateAll())
			inj.on = true
			err := c.Save()
			inj.on = false
			s := c.Stats()
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				require.Equal(t, err, s.CommitErr)
				require.Zero(t, s.Commits)
			} else {
				require.NoError(t, err)
				require.Equal(t, uint64(1), s.Commits)
			}
			_, serr := os.Stat(opts.Path)
			if !tc.kept {
				require.ErrorIs(t, serr, os.ErrNotExist)
				return
			}
			require.NoError(t, serr)
			later := process(t, opts, ks)
			require.Equal(t, uint64(2), later.Hits, "the file the failed commit left serves the next process")
		})
	}
}

// pathFails fails the operations fail picks while on is set; fail is given
// the cache's path.
type pathFails struct {
	on   bool
	path string
	fail func(errorfs.Op, string) error
}

func (p *pathFails) MaybeError(op errorfs.Op) error {
	if !p.on || p.fail == nil {
		return nil
	}
	return p.fail(op, p.path)
}

func (p *pathFails) String() string { return "pathFails" }

// A commit appends rather than rewrites when it would leave exactly one
// data page of garbage, whatever the ratio (docs/cache.md, "Space (G4)":
// more than one page of garbage, so FileSize <= (1 + ratio) x live + one
// page). A second launch that adds an entry of exactly one page to a file
// leaves just that: the first commit's index block, padded to the page
// where the new entry starts. A third such launch would leave two pages,
// and the same tiny ratio rewrites.
func TestCompactionNeedsMoreThanOnePageOfGarbage(t *testing.T) {
	page := max(vfs.OS().PageSize(), spec.MinPageSize)
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), Format: f, CompactGarbageRatio: 1e-9}
			process(t, opts, keys(1, 1))
			launchPage := func(name string) cache.Stats {
				c, err := cache.Open(opts)
				require.NoError(t, err)
				require.NoError(t, c.InitializeForProgram("P"))
				insertSized(t, c, key(name, 1), page)
				require.NoError(t, c.Finalize())
				s := c.Stats()
				require.NoError(t, c.Check())
				require.NoError(t, c.Close())
				return s
			}
			s := launchPage("a")
			g, _ := fileGarbage(t, opts.Path)
			require.Equal(t, int64(page), g, "the first index block and its padding")
			require.Equal(t, g, s.GarbageBytes)
			require.Zero(t, s.Compactions, "one page of garbage: append")
			require.Equal(t, uint64(1), s.Commits)

			s = launchPage("b")
			require.Equal(t, uint64(1), s.Compactions, "two pages of garbage: rewrite")
			require.Zero(t, s.GarbageBytes)
			later := process(t, opts, []spec.Key{key("w0", 1)})
			require.Equal(t, uint64(1), later.Hits)
		})
	}
}

// insertSized packs k into a reservation of exactly n bytes.
func insertSized(t testing.TB, c *cache.Cache, k spec.Key, n int) []byte {
	t.Helper()
	buf, err := c.ReserveSpace(n)
	require.NoError(t, err)
	fillPacked(k, buf)
	_, err = c.LookUpOrInsert(k, buf)
	require.NoError(t, err)
	return buf
}

// A reservation outstanding when the write it was appended to ends (a
// failed commit ends it) or moves to another file (a compaction) can no
// longer be committed: ReservedInFile says so, and its insert is a heap
// entry with reason write-failed, not a file entry naming an offset of a
// file that is gone or replaced. The next process finds the file's other
// entries intact.
func TestOutstandingReservationWhenItsWriteEnds(t *testing.T) {
	ks := keys(2, 1)
	extra, late := key("extra", 1), key("late", 1)
	for _, tc := range []struct {
		name string
		end  func(*testing.T, *cache.Cache, *opFails)
	}{
		{"commit fails", func(t *testing.T, c *cache.Cache, inj *opFails) {
			pack(t, c, extra)
			inj.on = true
			require.ErrorIs(t, c.Save(), syscall.EIO)
			inj.on = false
		}},
		{"compaction", func(t *testing.T, c *cache.Cache, _ *opFails) {
			require.NoError(t, c.Compact())
			require.Equal(t, uint64(1), c.Stats().Compactions)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), Format: spec.FormatV3, CompactGarbageRatio: -1}
			process(t, opts, ks)
			inj := &opFails{match: func(op errorfs.Op) bool { return op.Kind == errorfs.OpSyncData }}
			c := open(t, cache.Options{Path: opts.Path, Format: opts.Format, CompactGarbageRatio: -1, FS: errorfs.Wrap(vfs.OS(), inj)})
			require.NoError(t, c.InitializeForProgram("P"))
			require.False(t, c.ReservedInFile(make([]byte, 8)), "not a reservation")
			buf, err := c.ReserveSpace(sizeOf(late))
			require.NoError(t, err)
			require.True(t, c.ReservedInFile(buf))

			tc.end(t, c, inj)
			require.False(t, c.ReservedInFile(buf), "its region can no longer be committed")
			fillPacked(late, buf)
			h, err := c.LookUpOrInsert(late, buf)
			require.NoError(t, err)
			got, err := c.Bytes(h)
			require.NoError(t, err)
			require.Equal(t, packed(late), got)
			require.Equal(t, uint64(len(buf)), c.Stats().HeapBytes[cache.HeapWriteFailed])
			require.NoError(t, c.Finalize())

			later := process(t, cache.Options{Path: opts.Path, Format: opts.Format, CompactGarbageRatio: -1}, append(ks, late))
			require.Equal(t, spec.LoadOK, later.Load)
			require.Equal(t, uint64(len(ks)), later.Hits, "repacks %v", later.Repacks)
		})
	}
}

// v2 entries start at multiples of spec.V2Alignment (ExecuTorch's 4 KiB)
// even where the memory page is smaller: a v2 file records no page size,
// so a process appending to one it loaded aligns its regions to the larger
// of the two. The file system here reports 1 KiB pages; the kernel maps at
// 4 KiB, so a region at a 1 KiB boundary would not even map.
func TestV2AlignmentAboveSmallPages(t *testing.T) {
	if vfs.OS().PageSize() > spec.V2Alignment {
		t.Skipf("the kernel maps at %d bytes: a 4 KiB boundary would not map either", vfs.OS().PageSize())
	}
	opts := cache.Options{Path: tempPath(t), Format: spec.FormatV2, CompactGarbageRatio: -1,
		FS: pageFS{FS: vfs.OS(), page: 1 << 10}}
	ks := keys(4, 1)
	process(t, opts, ks[:1])
	s := process(t, opts, ks) // loads the v2 file and appends to it
	require.Equal(t, spec.LoadOK, s.Load)
	require.Empty(t, s.HeapBytes, "every packing in the file")
	require.Equal(t, uint64(1), s.Commits)

	b, err := os.ReadFile(opts.Path)
	require.NoError(t, err)
	v, err := spec.ParseV2(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	require.Len(t, v.Entries, len(ks))
	for _, e := range v.Entries {
		require.Zero(t, e.Offset%spec.V2Alignment, "%s at %d", e.Key.Weight, e.Offset)
	}
	require.Equal(t, uint64(len(ks)), process(t, opts, ks).Hits)
}

// A Finalize with nothing new since the last commit flushes nothing: the
// regions of the session were written back before that commit, and a
// region reserved and never inserted holds nothing to keep, so no
// fdatasync or msync reaches the file (each can cost a disk cache flush).
func TestFinalizeWithNothingNewFlushesNothing(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), Format: f, CompactGarbageRatio: -1}
			process(t, opts, keys(1, 1))
			flushes := &opCount{match: func(op errorfs.Op) bool {
				return op.Kind == errorfs.OpSyncData || op.Kind == errorfs.OpSync || op.Kind == errorfs.OpMapSync
			}}
			c := open(t, cache.Options{Path: opts.Path, Format: f, CompactGarbageRatio: -1, FS: errorfs.Wrap(vfs.OS(), flushes)})
			require.NoError(t, c.InitializeForProgram("P"))
			pack(t, c, key("new", 1))
			_, err := c.ReserveSpace(100) // never inserted
			require.NoError(t, err)
			require.NoError(t, c.Save())
			require.Equal(t, uint64(1), c.Stats().Commits)
			require.Positive(t, flushes.n, "the commit flushed")
			flushes.n = 0
			require.NoError(t, c.Finalize())
			require.Equal(t, uint64(1), c.Stats().Commits, "nothing new to commit")
			require.Zero(t, flushes.n, "flushes after the commit")
		})
	}
}

// opCount counts the operations match picks; it fails none.
type opCount struct {
	match func(errorfs.Op) bool
	n     int
}

func (o *opCount) MaybeError(op errorfs.Op) error {
	if o.match(op) {
		o.n++
	}
	return nil
}

func (o *opCount) String() string { return "opCount" }
