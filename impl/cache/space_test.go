package cache_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// ageFile sets path's mtime far in the past, so that any write shows.
func ageFile(t *testing.T, path string) os.FileInfo {
	t.Helper()
	old := time.Unix(1_000_000, 0)
	require.NoError(t, os.Chtimes(path, old, old))
	return fileInfo(t, path)
}

func requireUntouched(t *testing.T, path string, before os.FileInfo) {
	t.Helper()
	after := fileInfo(t, path)
	require.Equal(t, before.Size(), after.Size(), "size changed")
	require.True(t, before.ModTime().Equal(after.ModTime()), "mtime changed")
}

// G4: a warm launch, unload and reload, and Save with nothing new write
// nothing (ExecuTorch SavePackedIndex_NoNewReserves_IsNoOp,
// MultiSessionLoad_DoesNotGrowCacheFile); G5: a warm launch reserves no
// space.
func TestG4NothingWrittenWhenNothingChanged(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), Format: f}
			ks := keys(4, 1)
			process(t, opts, ks)
			before := ageFile(t, opts.Path)

			reserves := 0
			fsys := &hookFS{FS: vfs.OS(), allocate: func(string, int64, int64) error { reserves++; return nil }}
			c := open(t, cache.Options{Path: opts.Path, Format: f, FS: fsys})
			require.Equal(t, 4, launch(t, c, "P1", ks))
			require.NoError(t, c.Save())
			require.NoError(t, c.Save())
			require.NoError(t, c.DeleteProgram("P1"))
			require.Equal(t, 4, launch(t, c, "P1", ks))
			require.Equal(t, 4, launch(t, c, "P2", ks))
			require.NoError(t, c.Save())
			require.Zero(t, reserves, "a warm launch reserves no space (G5)")
			require.Zero(t, c.Stats().Commits)
			requireUntouched(t, opts.Path, before)

			process(t, opts, ks)
			requireUntouched(t, opts.Path, before)
		})
	}
}

// A cold launch whose packs all went to heap creates no file (ExecuTorch
// wrote a footer-only file that its next load rejected, latent issue 10c).
func TestNoFileForEmptyCommit(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	c := open(t, opts)
	require.NoError(t, c.InitializeForProgram("P"))
	pack(t, c, spec.Key{Seed: 1}) // unnamed: heap
	require.Equal(t, uint64(1), c.Stats().Misses, "a look-up of an unnamed constant is a miss")
	require.NoError(t, c.Finalize())
	require.NoError(t, c.Save())
	require.Positive(t, c.Stats().HeapBytes[cache.HeapUnnamed])
	_, err := os.Stat(opts.Path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// G4: garbage is counted, and compaction keeps the file within the bound:
// after any commit, garbage <= ratio * live (+ one page of slack).
func TestG4CompactionBoundsGarbage(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), Format: f, CompactGarbageRatio: 0.5}
			page := int64(vfs.OS().PageSize())
			compactions := uint64(0)
			for gen := range uint32(8) {
				ks := keys(6, gen+1) // every launch is a kernel upgrade
				s := process(t, opts, ks)
				compactions += s.Compactions
				live := s.FileSize - s.GarbageBytes
				require.LessOrEqual(t, float64(s.GarbageBytes), 0.5*float64(live)+float64(page),
					"launch %d: garbage %d live %d", gen, s.GarbageBytes, live)
				require.Equal(t, fileInfo(t, opts.Path).Size(), s.FileSize)
			}
			require.Positive(t, compactions)
			// Compacted files still hold every entry.
			s := process(t, opts, keys(6, 8))
			require.Equal(t, uint64(6), s.Hits)
		})
	}
}

// Without compaction the garbage of each upgrade accumulates and is
// reported; an explicit Compact rewrites the file down to its live bytes
// and a mapping of the old file stays valid.
func TestExplicitCompact(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), CompactGarbageRatio: -1}
	for gen := range uint32(4) {
		process(t, opts, keys(5, gen+1))
	}
	ks := keys(5, 4)
	c := open(t, opts)
	require.NoError(t, c.InitializeForProgram("P"))
	handles := make([]cache.Handle, len(ks))
	for i, k := range ks {
		var hit bool
		handles[i], hit = pack(t, c, k)
		require.True(t, hit)
	}
	require.NoError(t, c.Finalize())
	s := c.Stats()
	require.Positive(t, s.GarbageBytes)
	oldSize := s.FileSize

	require.NoError(t, c.Compact())
	s = c.Stats()
	require.Equal(t, uint64(1), s.Compactions)
	require.Less(t, s.FileSize, oldSize)
	require.Less(t, s.GarbageBytes, int64(vfs.OS().PageSize()))
	require.Equal(t, fileInfo(t, opts.Path).Size(), s.FileSize)
	for i, k := range ks {
		b, err := c.Bytes(handles[i]) // still the old file's mapping
		require.NoError(t, err)
		require.Equal(t, packed(k), b)
	}
	require.Equal(t, uint64(5), process(t, opts, ks).Hits)
}

// Compact before the first commit publishes the compacted file and leaves
// no temporary file behind.
func TestCompactOnColdCache(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	c := open(t, opts)
	ks := keys(3, 1)
	require.NoError(t, c.InitializeForProgram("P"))
	for _, k := range ks {
		pack(t, c, k)
	}
	require.NoError(t, c.Compact())
	require.NoError(t, c.Finalize())
	names, err := os.ReadDir(filepath.Dir(opts.Path))
	require.NoError(t, err)
	for _, n := range names {
		require.NotContains(t, n.Name(), ".tmp-")
	}
	require.Equal(t, uint64(3), process(t, opts, ks).Hits)
}

// A new file is allocated far ahead of its reservations (one fallocate per
// doubling, not one per region: regions carved one by one from the end of a
// file leave its page cache in small folios and every later launch pays a
// page fault per 64 KiB), and trimmed at commit: the index follows the last
// entry's page, and the file ends where its index does (v3) or in its
// footer (v2), with no space allocated ahead left inside or after it.
func TestNewFileAllocatedAheadAndTrimmed(t *testing.T) {
	// Bounded ahead, the file is extended about once per region; negative,
	// exactly once per region.
	for _, c := range []struct {
		ahead    int64
		min, max int
	}{{int64(os.Getpagesize()), 24, 47}, {-1, 48, 48}} {
		calls := 0
		fsys := &hookFS{FS: vfs.OS(), allocate: func(string, int64, int64) error { calls++; return nil }}
		process(t, cache.Options{Path: tempPath(t), FS: fsys, AllocateAhead: c.ahead}, keys(48, 1))
		require.GreaterOrEqual(t, calls, c.min, "AllocateAhead %d", c.ahead)
		require.LessOrEqual(t, calls, c.max, "AllocateAhead %d", c.ahead)
	}

	page := uint64(os.Getpagesize())
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			calls := 0
			fsys := &hookFS{FS: vfs.OS(), allocate: func(string, int64, int64) error { calls++; return nil }}
			opts := cache.Options{Path: tempPath(t), Format: f, FS: fsys}
			ks := keys(48, 1)
			s := process(t, opts, ks)
			require.Equal(t, uint64(1), s.Commits)
			require.LessOrEqual(t, calls, 8, "fallocate calls for 48 regions")

			b, err := os.ReadFile(opts.Path)
			require.NoError(t, err)
			r, size := bytes.NewReader(b), int64(len(b))
			var es []spec.Entry
			var indexOff, indexEnd uint64
			if f == spec.FormatV3 {
				pf, err := spec.ParseV3(r, size)
				require.NoError(t, err)
				es, indexOff = pf.Entries, pf.Commit.IndexOff
				indexEnd = indexOff + pf.Commit.IndexLen
			} else {
				pf, err := spec.ParseV2(r, size)
				require.NoError(t, err)
				es, indexOff, indexEnd = pf.Entries, pf.IndexStart, uint64(size)
			}
			var last uint64
			for _, e := range es {
				last = max(last, e.Offset+e.Size)
			}
			require.Equal(t, (last+page-1)/page*page, indexOff, "the index follows the last entry's page")
			require.Equal(t, uint64(size), indexEnd, "the file ends at its index")

			s = process(t, cache.Options{Path: opts.Path, Format: f}, ks)
			require.Equal(t, uint64(len(ks)), s.Hits)
		})
	}
}

// A new file's extensions are filled with huge folios in whole, aligned
// huge pages inside what was allocated, and a refused fill costs nothing
// but speed: every entry is still written, committed and found again.
func TestHugeFillRefusedChangesNothing(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		var fills [][2]int64
		var allocated int64
		fsys := &hookFS{FS: vfs.OS(),
			allocate: func(_ string, off, length int64) error { allocated = max(allocated, off+length); return nil },
			fill: func(_ string, off, length int64) error {
				fills = append(fills, [2]int64{off, length})
				require.Zero(t, off%vfs.HugePageSize, "fill at %d", off)
				require.Zero(t, length%vfs.HugePageSize, "fill of %d bytes", length)
				require.LessOrEqual(t, off+length, allocated, "fill past what was allocated")
				if refuse {
					return fmt.Errorf("refused: %w", vfs.ErrNotSupported)
				}
				return nil
			}}
		opts := cache.Options{Path: tempPath(t), FS: fsys}
		ks := make([]spec.Key, 24)
		for i := range ks {
			ks[i] = key("big"+itoa(i), 1)
		}
		c, err := cache.Open(opts)
		require.NoError(t, err)
		require.NoError(t, c.InitializeForProgram("P"))
		for _, k := range ks {
			buf, err := c.ReserveSpace(300 << 10)
			require.NoError(t, err)
			fillPacked(k, buf)
			_, err = c.LookUpOrInsert(k, buf)
			require.NoError(t, err)
		}
		require.NoError(t, c.Finalize())
		s := c.Stats()
		require.NoError(t, c.Close())
		require.Empty(t, s.HeapBytes, "refused %v: nothing falls back to the heap", refuse)
		require.Equal(t, uint64(1), s.Commits)
		require.GreaterOrEqual(t, len(fills), 2, "a 7 MB file is extended and filled more than once")
		c, err = cache.Open(cache.Options{Path: opts.Path})
		require.NoError(t, err)
		require.NoError(t, c.InitializeForProgram("P"))
		want := make([]byte, 300<<10)
		for _, k := range ks {
			h, hit := c.LookUp(k)
			require.True(t, hit, "refused %v: %q found again", refuse, k.Name())
			got, err := c.Bytes(h)
			require.NoError(t, err)
			fillPacked(k, want)
			require.True(t, bytes.Equal(want, got), "refused %v: bytes of %q", refuse, k.Name())
		}
		require.NoError(t, c.Finalize())
		require.NoError(t, c.Close())
	}
}
