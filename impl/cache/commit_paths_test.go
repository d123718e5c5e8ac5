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

// entriesOf parses the cache file at path with the spec's parser and
// returns its format and the number of entries its index lists.
func entriesOf(t *testing.T, path string) (spec.Format, int) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	r := bytes.NewReader(b)
	f, err := spec.DetectFormat(r, int64(len(b)))
	require.NoError(t, err, "the file is a valid cache file")
	if f == spec.FormatV2 {
		v, err := spec.ParseV2(r, int64(len(b)))
		require.NoError(t, err)
		return f, len(v.Entries)
	}
	v, err := spec.ParseV3(r, int64(len(b)))
	require.NoError(t, err)
	return f, len(v.Entries)
}

// A reservation never inserted leaves space after a live file's last
// commit. A v3 file needs no new commit for it (its commit slot says where
// the index is), so Finalize writes nothing (G4). A v2 file is found only
// through the footer at its end: a Save in the middle of the program ends
// the file in an index again, so the file on disk stays readable while the
// session goes on, and a Finalize with nothing new after it commits
// nothing more.
func TestReservationNeverInserted(t *testing.T) {
	ks := keys(2, 1)
	t.Run("v3", func(t *testing.T) {
		opts := cache.Options{Path: tempPath(t), Format: spec.FormatV3}
		process(t, opts, ks)
		before := fileInfo(t, opts.Path).Size()
		c := open(t, opts)
		require.NoError(t, c.InitializeForProgram("P"))
		_, err := c.ReserveSpace(100)
		require.NoError(t, err)
		require.NoError(t, c.Finalize())
		require.Zero(t, c.Stats().Commits, "nothing to commit")
		_, n := entriesOf(t, opts.Path)
		require.Equal(t, 2, n)
		require.Greater(t, fileInfo(t, opts.Path).Size(), before, "the reservation's region is garbage")
	})
	t.Run("v2", func(t *testing.T) {
		opts := cache.Options{Path: tempPath(t), Format: spec.FormatV2}
		process(t, opts, ks)
		c := open(t, opts)
		require.NoError(t, c.InitializeForProgram("P"))
		_, err := c.ReserveSpace(100)
		require.NoError(t, err)
		require.NoError(t, c.Save())
		f, n := entriesOf(t, opts.Path)
		require.Equal(t, spec.FormatV2, f)
		require.Equal(t, 2, n)
		require.Equal(t, uint64(1), c.Stats().Commits, "the same index again, after the reserved space")
		size := fileInfo(t, opts.Path).Size()
		require.NoError(t, c.Finalize())
		require.Equal(t, uint64(1), c.Stats().Commits, "nothing new since the Save")
		require.Equal(t, size, fileInfo(t, opts.Path).Size())
	})
}

// When every entry is dropped, a v3 file keeps a commit of an empty index,
// by append or by compaction; a v2 file, which cannot express one, goes
// away. A later process loads what is there and re-packs.
func TestEmptyIndexCommit(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		for _, compact := range []bool{false, true} {
			name := f.String() + "/append"
			if compact {
				name = f.String() + "/compact"
			}
			t.Run(name, func(t *testing.T) {
				opts := cache.Options{Path: tempPath(t), Format: f, CompactGarbageRatio: -1}
				ks := keys(2, 1)
				process(t, opts, ks)
				c := open(t, opts)
				require.NoError(t, c.InitializeForProgram("P"))
				require.NoError(t, c.InvalidateAll())
				require.NoError(t, c.Finalize())
				if compact {
					require.NoError(t, c.Compact())
				}
				if f == spec.FormatV2 {
					_, err := os.Stat(opts.Path)
					require.ErrorIs(t, err, os.ErrNotExist)
					return
				}
				got, n := entriesOf(t, opts.Path)
				require.Equal(t, spec.FormatV3, got)
				require.Zero(t, n)
				s := process(t, opts, ks)
				require.Equal(t, spec.LoadOK, s.Load)
				require.Equal(t, uint64(2), s.Repacks[cache.RepackNew])
			})
		}
	}
}

// A commit appended to the live file is durable before Save reports it:
// the directory entry, the index and the commit slot are each flushed, and
// a failure of any of those steps, or of the slot's write, is the Save's
// error (I12), with nothing new for a later process.
func TestAppendCommitFailures(t *testing.T) {
	for _, tc := range []struct {
		step  string
		match func(errorfs.Op) bool
	}{
		{"sync the directory", func(op errorfs.Op) bool { return op.Kind == errorfs.OpSyncDir }},
		{"flush index and slot", func(op errorfs.Op) bool { return op.Kind == errorfs.OpSyncData }},
		{"write the commit slot", func(op errorfs.Op) bool {
			return op.Kind == errorfs.OpWriteAt && op.Off < int64(spec.MinPageSize)
		}},
	} {
		t.Run(tc.step, func(t *testing.T) {
			// Compaction off: the commit appends, it does not rewrite.
			opts := cache.Options{Path: tempPath(t), Format: spec.FormatV3, CompactGarbageRatio: -1}
			ks := keys(1, 1)
			process(t, opts, ks)
			inj := &opFails{match: tc.match}
			c := open(t, cache.Options{Path: opts.Path, Format: opts.Format, CompactGarbageRatio: -1, FS: errorfs.Wrap(vfs.OS(), inj)})
			require.NoError(t, c.InitializeForProgram("P"))
			extra := key("extra", 1)
			pack(t, c, extra) // one region: flushed by msync, not fdatasync
			inj.on = true
			err := c.Save()
			inj.on = false
			require.ErrorIs(t, err, syscall.EIO)
			require.Equal(t, err, c.Stats().CommitErr)
			require.Zero(t, c.Stats().Commits)
			require.NoError(t, c.Finalize())
			require.NoError(t, c.Close())
			s := process(t, opts, append(ks, extra))
			require.Equal(t, uint64(1), s.Hits, "only the entry committed before")
		})
	}
}

// An invalidation another process committed first makes this instance's
// commit unnecessary: the write it starts merges the newest commit, finds
// nothing left to change, and writes nothing (G4).
func TestCommitMadeUnnecessaryByMerge(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), Format: spec.FormatV3}
	ks := keys(2, 1)
	process(t, opts, ks)

	a := open(t, opts)
	require.NoError(t, a.InitializeForProgram("P"))
	require.NoError(t, a.Invalidate("w0"))

	b := open(t, opts)
	require.NoError(t, b.InitializeForProgram("P"))
	require.NoError(t, b.Invalidate("w0"))
	require.NoError(t, b.Finalize())
	require.Equal(t, uint64(1), b.Stats().Commits)
	size := fileInfo(t, opts.Path).Size()

	require.NoError(t, a.Finalize())
	require.Zero(t, a.Stats().Commits)
	require.Equal(t, size, fileInfo(t, opts.Path).Size())
	require.Equal(t, b.Stats().Generation, a.Stats().Generation)
}

// The compaction decision is exact: an append commit happens when the
// garbage it would leave (by the file's byte map, spec.Garbage) is at most
// CompactGarbageRatio times the live bytes, and a rewrite when it is more.
// The same kernel switch is run three times on identical files: with
// compaction off, to measure the garbage g and live bytes l of the
// appended file, then with the ratio g/l and just below it.
func TestCompactionThresholdExact(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			run := func(ratio float64) (cache.Stats, string) {
				opts := cache.Options{Path: tempPath(t), Format: f, CompactGarbageRatio: ratio}
				process(t, opts, keys(6, 1))
				return process(t, opts, append(keys(2, 2), keys(6, 1)[2:]...)), opts.Path
			}
			s, path := run(-1)
			require.Zero(t, s.Compactions)
			g, _ := fileGarbage(t, path)
			live := fileInfo(t, path).Size() - g
			require.Greater(t, g, int64(vfs.OS().PageSize()), "more than a page of garbage")
			at := float64(g) / float64(live)
			require.Equal(t, float64(g), at*float64(live), "g/l times l is g again in floating point")

			s, _ = run(at)
			require.Zero(t, s.Compactions, "garbage %d <= ratio * live %d: append", g, live)
			require.Equal(t, g, s.GarbageBytes)
			s, _ = run(at * (1 - 1e-9))
			require.Equal(t, uint64(1), s.Compactions, "garbage %d > ratio * live %d: rewrite", g, live)
		})
	}
}

// A v2 file has no generation of its own: Stats.Generation counts the
// commits of the current write, one by one (each write starts from the
// file as it finds it, generation 0).
func TestV2GenerationCountsCommits(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), Format: spec.FormatV2, CompactGarbageRatio: -1}
	c := open(t, opts)
	ks := keys(2, 1)
	require.NoError(t, c.InitializeForProgram("P"))
	for i, k := range ks {
		pack(t, c, k)
		require.NoError(t, c.Save())
		require.Equal(t, uint64(i+1), c.Stats().Generation)
	}
	require.NoError(t, c.Finalize())
	require.Equal(t, uint64(2), c.Stats().Commits)
}

// A v2 write that fails after it appended to the live file ends the file
// in the index of the last commit again (the file is found only through
// its footer). That index is the one this write committed last, with what
// it added since it read the file, not the one it read.
func TestV2FailedAppendKeepsOwnLastCommit(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), Format: spec.FormatV2, CompactGarbageRatio: -1}
	ks := keys(3, 1)
	process(t, opts, ks[:1])

	inj := &opFails{}
	c := open(t, cache.Options{Path: opts.Path, Format: opts.Format, CompactGarbageRatio: -1, FS: errorfs.Wrap(vfs.OS(), inj)})
	require.NoError(t, c.InitializeForProgram("P"))
	pack(t, c, ks[1])
	require.NoError(t, c.Save()) // commits ks[1]; the write goes on
	require.Equal(t, uint64(1), c.Stats().Commits)
	pack(t, c, ks[2])
	// The index append fails once; the re-termination after it succeeds.
	size := fileInfo(t, opts.Path).Size()
	inj.match = func(op errorfs.Op) bool {
		if op.Kind == errorfs.OpWriteAt && op.Off >= size {
			inj.on = false
			return true
		}
		return false
	}
	inj.on = true
	require.NoError(t, c.Finalize())
	st := c.Stats()
	require.ErrorIs(t, st.CommitErr, syscall.EIO)
	// The figures are those of the re-terminated file.
	g, _ := fileGarbage(t, opts.Path)
	require.Equal(t, fileInfo(t, opts.Path).Size(), st.FileSize)
	require.Equal(t, g, st.GarbageBytes)
	require.NoError(t, c.Close())

	s := process(t, opts, ks)
	require.Equal(t, spec.LoadOK, s.Load)
	require.Equal(t, uint64(2), s.Hits, "the entries of both commits, repacks %v", s.Repacks)
}
