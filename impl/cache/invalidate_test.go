package cache_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/corrupt"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// G3: after a kernel upgrade (seed), a packer change (fingerprint) or new
// source weights, one launch re-packs into the file (not heap, ExecuTorch
// #22183) and the next launch hits everything; the file stops growing
// (ExecuTorch SeedMismatch_RepackIsPersistedToFile and
// SeedMismatch_CacheConvergesAfterOneRebuild).
func TestG3ConvergesAfterInvalidation(t *testing.T) {
	cases := []struct {
		reason cache.RepackReason
		change func(*spec.Key)
	}{
		{cache.RepackSeed, func(k *spec.Key) { k.Seed++ }},
		{cache.RepackFingerprint, func(k *spec.Key) { k.Fingerprint++ }},
		{cache.RepackSource, func(k *spec.Key) { k.Source++ }},
	}
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		for _, tc := range cases {
			if f == spec.FormatV2 && tc.reason != cache.RepackSeed {
				continue // v2 stores neither fingerprint nor source
			}
			t.Run(f.String()+"/"+string(tc.reason), func(t *testing.T) {
				opts := cache.Options{Path: tempPath(t), Format: f, CompactGarbageRatio: -1}
				old := keys(4, 1)
				process(t, opts, old)

				upgraded := make([]spec.Key, len(old))
				for i, k := range old {
					tc.change(&k)
					upgraded[i] = k
				}
				s := process(t, opts, upgraded)
				require.Equal(t, uint64(4), s.Repacks[tc.reason], "%+v", s.Repacks)
				require.Empty(t, s.HeapBytes, "re-packs go to the file")
				require.Positive(t, s.GarbageBytes, "stale entries are garbage")

				size := fileInfo(t, opts.Path).Size()
				for range 3 {
					s = process(t, opts, upgraded)
					require.Zero(t, s.Misses)
					require.Equal(t, uint64(4), s.Hits)
					require.Equal(t, size, fileInfo(t, opts.Path).Size())
				}
			})
		}
	}
}

func TestExplicitInvalidate(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), CompactGarbageRatio: -1}
	ks := keys(3, 1)
	process(t, opts, ks)

	c := open(t, opts)
	require.NoError(t, c.InitializeForProgram("P"))
	h, hit := pack(t, c, ks[0])
	require.True(t, hit)
	require.NoError(t, c.Invalidate("w0"))
	_, hit = c.LookUp(ks[0])
	require.False(t, hit)
	// The program's handle still reads the bytes it was given.
	b, err := c.Bytes(h)
	require.NoError(t, err)
	require.True(t, bytes.Equal(packed(ks[0]), b))
	pack(t, c, ks[0])
	require.NoError(t, c.Finalize())
	require.Equal(t, uint64(1), c.Stats().Repacks[cache.RepackInvalidated])

	require.NoError(t, c.InvalidateAll())
	require.Empty(t, c.Names())
	require.NoError(t, c.Save())

	// The commit dropped everything: a new process misses all three.
	s := process(t, opts, ks)
	require.Equal(t, uint64(3), s.Repacks[cache.RepackNew])
}

// G1: data corrupted after its commit is caught on first use (the default
// policy), re-packed into the file, and the next launch hits again.
func TestG1CorruptDataCaughtOnFirstUse(t *testing.T) {
	for _, policy := range []cache.VerifyPolicy{cache.VerifyOnFirstUse, cache.VerifyOnLoad} {
		t.Run(policy.String(), func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), VerifyData: policy}
			ks := keys(3, 1)
			process(t, opts, ks)
			flipDataByte(t, opts.Path, ks[1])

			s := process(t, opts, ks) // pack() asserts the bytes are correct
			require.Equal(t, uint64(1), s.Corrupt)
			require.Equal(t, uint64(1), s.Repacks[cache.RepackCorrupt])
			require.Equal(t, uint64(2), s.Hits)

			s = process(t, opts, ks)
			require.Equal(t, uint64(3), s.Hits)
			require.Zero(t, s.Corrupt)
		})
	}
}

// With verification off a flipped byte goes unnoticed: the test shows the
// policy matters (and that the G1 test above can fail).
func TestVerifyOffTrustsData(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), VerifyData: cache.VerifyOff}
	ks := keys(2, 1)
	process(t, opts, ks)
	flipDataByte(t, opts.Path, ks[0])
	c := open(t, opts)
	require.NoError(t, c.InitializeForProgram("P"))
	h, hit := c.LookUp(ks[0])
	require.True(t, hit)
	b, err := c.Bytes(h)
	require.NoError(t, err)
	require.False(t, bytes.Equal(packed(ks[0]), b))
	require.NoError(t, c.Finalize())
}

// flipDataByte corrupts one data byte of k's committed entry, in place, as
// bit rot or a foreign writer would.
func flipDataByte(t *testing.T, path string, k spec.Key) {
	t.Helper()
	require.NoError(t, corrupt.RotEntry(path, func(e spec.Key) bool { return e == k }))
}

// An invalidation is committed in both formats: merging the file's commit
// at the start of the write must not bring the dropped entry back (v2
// stores only the concatenated name and the seed, so the dropped entry's
// full key never equals the file's).
func TestInvalidateIsCommitted(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), Format: f}
			ks := keys(2, 1)
			process(t, opts, ks)
			c := open(t, opts)
			require.NoError(t, c.InitializeForProgram("P"))
			require.NoError(t, c.Invalidate("w0"))
			require.NoError(t, c.Save())
			require.NoError(t, c.Finalize())
			s := process(t, opts, ks)
			require.Equal(t, uint64(1), s.Hits)
			require.Equal(t, uint64(1), s.Repacks[cache.RepackNew])
		})
	}
}

// An invalidation of an entry this instance packed and committed itself
// survives the refresh at the next program's start: the refresh must take
// the file's entry for the dropped copy although the file knows it by
// another key (v2 records only the concatenated name and the seed), or the
// dropped entry is served again from the file.
func TestInvalidateOwnPackingSurvivesRefresh(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(f.String(), func(t *testing.T) {
			opts := cache.Options{Path: tempPath(t), Format: f}
			ks := keys(2, 1)
			c := open(t, opts)
			launch(t, c, "P", ks)
			require.NoError(t, c.Invalidate("w0"))
			require.NoError(t, c.InitializeForProgram("P2"))
			_, hit := c.LookUp(ks[0])
			require.False(t, hit, "the dropped entry came back from the file")
			_, hit = c.LookUp(ks[1])
			require.True(t, hit)
			require.NoError(t, c.Finalize())
			s := process(t, opts, ks)
			require.Equal(t, uint64(1), s.Hits)
			require.Equal(t, uint64(1), s.Repacks[cache.RepackNew])
		})
	}
}

// An invalidation not committed yet yields to another writer's re-pack of
// the same weight: same key, bytes and checksum, but another copy. The
// refresh at the next program's start tells the copies apart by their copy
// identity (v3) and serves the new one; dropping it would throw away the
// other process's work and its next commit would delete the entry. v2
// records no copy identity (docs/guarantees.md, G3), so v3 only.
func TestInvalidationYieldsToAnotherWritersRepack(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), Format: spec.FormatV3}
	ks := keys(2, 1)
	a := open(t, opts)
	launch(t, a, "P", ks)
	require.NoError(t, a.Invalidate("w0"))

	b := open(t, opts)
	require.NoError(t, b.InitializeForProgram("P"))
	require.NoError(t, b.Invalidate("w0"))
	_, hit := pack(t, b, ks[0])
	require.False(t, hit)
	require.NoError(t, b.Finalize())

	require.NoError(t, a.InitializeForProgram("P2"))
	h, hit := a.LookUp(ks[0])
	require.True(t, hit, "the other writer's re-pack was dropped with this instance's invalidated copy")
	got, err := a.Bytes(h)
	require.NoError(t, err)
	require.Equal(t, packed(ks[0]), got)
	require.NoError(t, a.Finalize())
	s := process(t, opts, ks)
	require.Equal(t, uint64(2), s.Hits)
}

// VerifyOnCompute: a look-up hands the handle out unchecked; the first
// Bytes of it checks the data, and a failed check is ErrCorruptData, on
// every later call too (the bytes are never handed out), and the next
// look-up misses with reason corrupt. Intact entries are checked once.
func TestVerifyOnComputeChecksAtBytes(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), VerifyData: cache.VerifyOnCompute, DisablePrefault: true}
	ks := keys(2, 1)
	process(t, opts, ks)
	flipDataByte(t, opts.Path, ks[1])

	c := open(t, opts)
	require.NoError(t, c.InitializeForProgram("P"))
	h0, hit := c.LookUp(ks[0])
	require.True(t, hit)
	h1, hit := c.LookUp(ks[1])
	require.True(t, hit, "a look-up checked the data")
	require.Zero(t, c.Stats().Verified)

	b, err := c.Bytes(h0)
	require.NoError(t, err)
	require.Equal(t, packed(ks[0]), b)
	_, err = c.Bytes(h0)
	require.NoError(t, err)
	require.Equal(t, uint64(1), c.Stats().Verified, "an intact entry is checked once")

	_, err = c.Bytes(h1)
	require.ErrorIs(t, err, cache.ErrCorruptData)
	_, err = c.Bytes(h1)
	require.ErrorIs(t, err, cache.ErrCorruptData, "a second Bytes handed out the corrupt bytes")
	require.Equal(t, uint64(1), c.Stats().Corrupt)
	_, hit = c.LookUp(ks[1])
	require.False(t, hit)
	require.NoError(t, c.Finalize())
}

// An insert whose packed bytes equal the loaded entry's keeps the entry and
// trusts it as this cache's own packing: under VerifyOnCompute its bytes are
// not checked again at Bytes (they were just compared with a fresh
// packing), as the model's insert marks the entry verified (found by
// TestConformanceOnCompute: the cache reported a check the model did not).
func TestInsertOfEqualBytesNeedsNoCheck(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), VerifyData: cache.VerifyOnCompute, DisablePrefault: true}
	ks := keys(1, 1)
	process(t, opts, ks)

	c := open(t, opts)
	require.NoError(t, c.InitializeForProgram("P"))
	want := packed(ks[0])
	buf, err := c.ReserveSpace(len(want))
	require.NoError(t, err)
	copy(buf, want)
	h, err := c.LookUpOrInsert(ks[0], buf[:len(want)])
	require.NoError(t, err)
	b, err := c.Bytes(h)
	require.NoError(t, err)
	require.Equal(t, want, b)
	require.Zero(t, c.Stats().Verified, "bytes equal to a fresh packing were checked again")
	require.NoError(t, c.Finalize())
}

// A program's handles stay valid through a refresh that maps new entries
// while the index is empty (everything invalidated, the program's entries
// still referenced): the refresh must add to the handle table, not start a
// new one, or the program's next Bytes fails with ErrStaleHandle.
func TestHandlesOutliveRefreshAfterInvalidateAll(t *testing.T) {
	opts := cache.Options{Path: tempPath(t), Format: spec.FormatV3}
	ks := keys(2, 1)
	a := open(t, opts)
	require.NoError(t, a.InitializeForProgram("P"))
	h0, _ := pack(t, a, ks[0])
	require.NoError(t, a.Finalize())
	require.NoError(t, a.InvalidateAll())

	process(t, opts, []spec.Key{key("x", 1)})
	require.NoError(t, a.InitializeForProgram("Q"))
	_, hit := a.LookUp(key("x", 1))
	require.True(t, hit, "the other process's entry is mapped")
	got, err := a.Bytes(h0)
	require.NoError(t, err, "program P's handle went stale at Q's refresh")
	require.Equal(t, packed(ks[0]), got)
	require.NoError(t, a.Finalize())
}

// An entry whose check fails at a compute after finalize is re-packed
// outside any program's packing (impl/runtime Backend.packedBytes); the
// programs that held it hold the re-pack, so deleting them releases it:
// here a heap re-pack, the writer lock being another instance's (found by
// TestConformanceOnCompute: the heap re-pack outlived its program).
func TestRepackAfterFinalizeBelongsToHolders(t *testing.T) {
	opts, ks, c, h := warmLaunchOfRot(t)

	other := open(t, opts)
	require.NoError(t, other.InitializeForProgram("Q"))
	_, err := other.ReserveSpace(64) // takes the writer lock
	require.NoError(t, err)

	_, err = c.Bytes(h)
	require.ErrorIs(t, err, cache.ErrCorruptData)
	_, hit := pack(t, c, ks[0]) // the runtime's re-pack: look up, reserve, insert, read
	require.False(t, hit)
	require.NotZero(t, c.Stats().HeapBytes[cache.HeapLockBusy], "the re-pack went to the heap")
	names := c.ProgramNames("P")
	require.Len(t, names, 2, "the program holding the failed entry holds its re-pack too")
	require.Equal(t, names[0], names[1])

	require.NoError(t, c.DeleteProgram("P"))
	require.Empty(t, c.Names(), "the heap re-pack outlived its program")
	require.Zero(t, c.Stats().HeapBytes[cache.HeapLockBusy])
	require.NoError(t, other.Finalize())
}

// A save after a reservation outside any launch gives the writer lock back
// even when it has nothing to commit: here the re-pack after finalize of an
// entry found corrupt at a compute, whose insert keeps the equal packing
// another instance committed meanwhile (found by TestConformanceOnCompute:
// the idle instance kept the lock and the next process's load found it
// busy).
func TestIdleSaveAfterRepackReleasesWriterLock(t *testing.T) {
	opts, ks, c, h := warmLaunchOfRot(t)
	_, err := c.Bytes(h)
	require.ErrorIs(t, err, cache.ErrCorruptData)

	// Another process (checking at the look-up) re-packs and commits w0
	// first.
	process(t, cache.Options{Path: opts.Path, VerifyData: cache.VerifyOnFirstUse}, ks)

	// The re-pack: its reservation takes the writer lock and merges that
	// commit; the insert keeps the equal packing.
	_, hit := pack(t, c, ks[0])
	require.False(t, hit)
	commits := c.Stats().Commits
	require.NoError(t, c.Save())
	require.Equal(t, commits, c.Stats().Commits, "nothing new to commit")

	next := open(t, opts)
	require.NoError(t, next.InitializeForProgram("P"))
	require.Equal(t, spec.LoadOK, next.Stats().Load, "the idle instance kept the writer lock")
	require.NoError(t, next.Finalize())
}

// Under VerifyOnCompute a loaded entry that left the index while a program
// held it (another process dropped it; this instance's refresh retired it)
// is still checked at its first read: it was never this instance's packing
// (found by TestConformanceOnCompute, where the cache handed out a retired
// entry's bytes unchecked).
func TestRetiredLoadedEntryCheckedAtCompute(t *testing.T) {
	opts, ks, c, h := warmLaunchOfRot(t)

	other := open(t, cache.Options{Path: opts.Path})
	require.NoError(t, other.InitializeForProgram("Q"))
	require.NoError(t, other.Invalidate(ks[0].Weight))
	require.NoError(t, other.Save())
	require.NoError(t, other.Close())

	require.NoError(t, c.InitializeForProgram("P2")) // the refresh retires w0
	require.NoError(t, c.Finalize())
	require.Empty(t, c.Names())
	_, err := c.Bytes(h)
	require.ErrorIs(t, err, cache.ErrCorruptData, "a retired loaded entry was handed out unchecked")
	require.Equal(t, uint64(1), c.Stats().Verified)
}

// warmLaunchOfRot is a launch under VerifyOnCompute of program P over a
// file whose one entry's bytes changed after their commit: the look-up
// hands the entry out unchecked, and P is finalized holding it.
func warmLaunchOfRot(t *testing.T) (cache.Options, []spec.Key, *cache.Cache, cache.Handle) {
	t.Helper()
	opts := cache.Options{Path: tempPath(t), VerifyData: cache.VerifyOnCompute, DisablePrefault: true}
	ks := keys(1, 1)
	process(t, opts, ks)
	flipDataByte(t, opts.Path, ks[0])
	c := open(t, opts)
	require.NoError(t, c.InitializeForProgram("P"))
	h, hit := c.LookUp(ks[0])
	require.True(t, hit)
	require.NoError(t, c.Finalize())
	return opts, ks, c, h
}

// A launch whose load found the writer lock busy packs to the heap; a
// re-pack after its finalize (a compute's failed check) is no part of that
// launch and asks for the lock again, so with the lock free it goes to the
// file (found by TestConformanceOnCompute: the cache kept the launch's busy
// verdict where the model took the lock).
func TestRepackAfterFinalizeAsksForTheLockAgain(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(2, 1)
	holder := open(t, opts)
	require.NoError(t, holder.InitializeForProgram("Q"))
	_, err := holder.ReserveSpace(64) // takes the writer lock
	require.NoError(t, err)

	c := open(t, opts)
	require.NoError(t, c.InitializeForProgram("P"))
	require.Equal(t, spec.LoadLocked, c.Stats().Load)
	pack(t, c, ks[0]) // to the heap: the lock is busy
	require.NoError(t, c.Finalize())
	require.NoError(t, holder.Finalize()) // the lock is free again

	pack(t, c, ks[1]) // after finalize, as a compute's re-pack
	require.Equal(t, uint64(sizeOf(ks[0])), c.Stats().HeapBytes[cache.HeapLockBusy], "the re-pack after finalize kept the launch's busy verdict")
	require.NoError(t, c.Save()) // as the runtime saves a compute's re-pack
}
