package cache_test

import (
	"bytes"
	"os"
	goruntime "runtime"
	"syscall"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// With staged writes (the default) a reservation is heap memory, still counted as file
// space (ReservedInFile), and its insert writes the packed bytes into the
// file: the handle serves a mapping of the file, not the staging buffer,
// the bytes are in the file the commit publishes, and a later process hits
// them.
func TestStagedInsertLandsInFile(t *testing.T) {
	for _, format := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		opts := cache.Options{Path: tempPath(t), Format: format}
		ks := keys(3, 1)
		c := open(t, opts)
		require.NoError(t, c.InitializeForProgram("P"))
		for _, k := range ks {
			buf, err := c.ReserveSpace(sizeOf(k))
			require.NoError(t, err)
			require.True(t, c.ReservedInFile(buf), "%v: a staged reservation is file space", format)
			fillPacked(k, buf)
			h, err := c.LookUpOrInsert(k, buf)
			require.NoError(t, err)
			// The staging buffer changed after the insert does not change
			// the entry: its bytes were written, not kept.
			clear(buf)
			got, err := c.Bytes(h)
			require.NoError(t, err)
			require.Equal(t, packed(k), got, "%v: bytes served after the insert", format)
			require.NotEqual(t, uintptrOf(buf), uintptrOf(got), "%v: the staging buffer is served", format)
		}
		require.NoError(t, c.Finalize())
		s := c.Stats()
		require.Zero(t, s.HeapBytes[cache.HeapWriteFailed])
		require.Equal(t, uint64(1), s.Commits)
		require.NoError(t, c.Close())

		file, err := os.ReadFile(opts.Path)
		require.NoError(t, err)
		for _, k := range ks {
			require.True(t, bytes.Contains(file, packed(k)), "%v: %s not in the file", format, k.Name())
		}
		later := process(t, cache.Options{Path: opts.Path, Format: format}, ks)
		require.Equal(t, uint64(len(ks)), later.Hits, "%v: repacks %v", format, later.Repacks)
		require.Zero(t, later.Corrupt)
	}
}

// A staged insert whose write fails keeps the packed bytes on the heap
// (reason write-failed, the error recorded): inference reads the right
// bytes, and the commit leaves the entry out, since the file does not hold
// it. The other entries are committed.
func TestStagedWriteFailureFallsBackToHeap(t *testing.T) {
	path := tempPath(t)
	inj := &opFails{match: func(op errorfs.Op) bool { return op.Kind == errorfs.OpWriteAt }}
	c := open(t, cache.Options{Path: path, FS: errorfs.Wrap(vfs.OS(), inj)})
	x, y := key("x", 1), key("y", 1)
	require.NoError(t, c.InitializeForProgram("P"))
	buf, err := c.ReserveSpace(sizeOf(x))
	require.NoError(t, err)
	fillPacked(x, buf)
	inj.on = true
	hx, err := c.LookUpOrInsert(x, buf)
	inj.on = false
	require.NoError(t, err)
	got, err := c.Bytes(hx)
	require.NoError(t, err)
	require.Equal(t, packed(x), got)
	pack(t, c, y)
	s := c.Stats()
	require.Equal(t, uint64(sizeOf(x)), s.HeapBytes[cache.HeapWriteFailed])
	require.ErrorIs(t, s.FallbackErr, syscall.EIO)
	require.NoError(t, c.Finalize())
	got, err = c.Bytes(hx)
	require.NoError(t, err)
	require.Equal(t, packed(x), got, "after Finalize")
	require.Equal(t, uint64(1), c.Stats().Commits)
	require.NoError(t, c.Close())

	later := process(t, cache.Options{Path: path}, []spec.Key{x, y})
	require.Equal(t, uint64(1), later.Hits, "only y was committed")
	require.Equal(t, uint64(1), later.Repacks[cache.RepackNew], "x was never committed")
	require.Zero(t, later.Corrupt)
}

// Staged bytes are durable once committed, on both write-back paths (one
// region msync'ed, several by fdatasync): a power cut right after the
// commit keeping nothing unsynced loses no committed entry. A cut before
// the next launch's commit loses only what that launch packed.
func TestStagedPowerLossKeepsCommitted(t *testing.T) {
	for _, n := range []int{1, 4} {
		fsys := crashfs.New(crashfs.Options{})
		require.NoError(t, fsys.MkdirAll("/c"))
		opts := cache.Options{Path: "/c/w.xpwc", FS: fsys}
		first, second := keys(n, 1), keys(2*n, 2)[n:]
		process(t, opts, first)

		after := fsys.PowerLossWith(crashfs.LossConfig{Seed: 1, Keep: 0})
		s := process(t, cache.Options{Path: opts.Path, FS: after}, first)
		require.Equal(t, uint64(n), s.Hits, "%d regions: repacks %v", n, s.Repacks)
		require.Zero(t, s.Corrupt)

		// The next launch packs more and loses power before its commit.
		c := open(t, cache.Options{Path: opts.Path, FS: after})
		require.NoError(t, c.InitializeForProgram("P"))
		for _, k := range append(append([]spec.Key{}, first...), second...) {
			pack(t, c, k)
		}
		for seed := uint64(1); seed <= 4; seed++ {
			cut := after.PowerLossWith(crashfs.LossConfig{Seed: seed, Keep: 0.5})
			s := process(t, cache.Options{Path: opts.Path, FS: cut}, first)
			require.Equal(t, uint64(n), s.Hits, "%d regions, seed %d: repacks %v", n, seed, s.Repacks)
			require.Zero(t, s.Corrupt)
		}
		require.ErrorIs(t, c.Close(), cache.ErrUncommitted, "the launch that lost power committed nothing")
	}
}

// A power cut at any point of a staged launch appending to a live file,
// keeping any part of what was not yet synced, never leaves an index that
// names staged bytes the file lost: the next process finds no corrupt
// entry, serves only the packed bytes (pack compares them) and, from a v3
// file, hits everything committed before the launch. The index is only written after
// the staged bytes are written back (finishRegions); a v2 file, whose
// index is written and synced together with nothing after it, depends on
// that order, and a v2 hit is not checked against a checksum.
func TestStagedPowerLossAtEveryPoint(t *testing.T) {
	for _, format := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		stagedPowerLossAtEveryPoint(t, format)
	}
}

func stagedPowerLossAtEveryPoint(t *testing.T, format spec.Format) {
	first, second := keys(2, 1), keys(5, 2)[2:]
	all := append(append([]spec.Key{}, first...), second...)
	base := func() (*crashfs.FS, cache.Options) {
		fsys := crashfs.New(crashfs.Options{})
		require.NoError(t, fsys.MkdirAll("/c"))
		opts := cache.Options{Path: "/c/w.xpwc", FS: fsys, Format: format}
		process(t, opts, first)
		return fsys, opts
	}
	fsys, _ := base()
	start := fsys.Ops()
	_, opts := base()
	process(t, opts, all)
	ops := opts.FS.(*crashfs.FS).Ops() - start
	require.Positive(t, ops)
	for n := 0; n <= ops; n++ {
		fsys, opts := base()
		fsys.SetCrashAfter(start + n)
		c, err := cache.Open(opts)
		if err == nil {
			if c.InitializeForProgram("P") == nil {
				for _, k := range all {
					if _, hit := c.LookUp(k); !hit {
						if buf, err := c.ReserveSpace(sizeOf(k)); err == nil {
							fillPacked(k, buf)
							_, _ = c.LookUpOrInsert(k, buf)
						}
					}
				}
				_ = c.Finalize()
			}
			_ = c.Close()
		}
		i := 0
		for cut := range fsys.PowerLossOutcomes(16, uint64(n)) {
			s := process(t, cache.Options{Path: opts.Path, FS: cut, Format: format}, all)
			require.Zero(t, s.Corrupt, "%v: crash after op %d of %d, outcome %d", format, n, ops, i)
			if format == spec.FormatV3 {
				// A v2 file that grew past its footer is rejected
				// whole (docs/cache.md, "What v2 gives up").
				require.GreaterOrEqual(t, s.Hits, uint64(len(first)), "%v: crash after op %d of %d, outcome %d", format, n, ops, i)
			}
			i++
		}
	}
}

// Nothing keeps a staged buffer alive once its bytes are written: the
// cache's record of inserted reservations (for ErrAlreadyInserted) holds it
// weakly. Holding it to Finalize kept a cold launch's whole packing on the
// heap (VmHWM of a llama-1184 cold launch 1.18 GB instead of 0.59 GB). A
// buffer still held is still known as inserted.
func TestStagedBuffersNotRetained(t *testing.T) {
	c := open(t, cache.Options{Path: tempPath(t)})
	require.NoError(t, c.InitializeForProgram("P"))
	var weaks []weak.Pointer[byte]
	for _, k := range keys(8, 1) {
		buf, err := c.ReserveSpace(1 << 20)
		require.NoError(t, err)
		fillPacked(k, buf)
		_, err = c.LookUpOrInsert(k, buf)
		require.NoError(t, err)
		weaks = append(weaks, weak.Make(&buf[0]))
	}
	held, err := c.ReserveSpace(sizeOf(key("held", 1)))
	require.NoError(t, err)
	fillPacked(key("held", 1), held)
	_, err = c.LookUpOrInsert(key("held", 1), held)
	require.NoError(t, err)
	goruntime.GC()
	goruntime.GC()
	for i, w := range weaks {
		require.Nil(t, w.Value(), "staged buffer %d still reachable after its insert", i)
	}
	_, err = c.LookUpOrInsert(key("held", 1), held)
	require.ErrorIs(t, err, cache.ErrAlreadyInserted)
	_, err = c.LookUpOrInsert(key("other", 1), make([]byte, 64))
	require.ErrorIs(t, err, cache.ErrNotReserved)
	require.NoError(t, c.Finalize())
}
