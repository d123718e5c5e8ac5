package cache_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

func TestReserveSpaceAlignedAndTyped(t *testing.T) {
	for _, path := range []string{"", tempPath(t)} {
		c := open(t, cache.Options{Path: path})
		require.NoError(t, c.InitializeForProgram("P"))
		_, err := c.ReserveSpace(0)
		require.ErrorIs(t, err, cache.ErrInvalidSize)
		for _, n := range []int{1, 63, 4096, 10000} {
			b, err := c.ReserveSpace(n)
			require.NoError(t, err)
			require.Len(t, b, n)
			require.Zero(t, uintptrOf(b)%64, "64-byte aligned")
		}
		require.NoError(t, c.Finalize())
	}
}

// Handles are never reused: after an entry is released its handle is a
// typed error, and a new entry gets a new handle (ExecuTorch's slot indices
// could point at another entry after a reset: closed #20562's
// OffsetToAddr_AfterResetForFreshWrite_NotDangling).
func TestHandlesAreNeverReused(t *testing.T) {
	c := open(t, cache.Options{})
	k := key("w", 1)
	require.NoError(t, c.InitializeForProgram("P"))
	h1, _ := pack(t, c, k)
	require.NoError(t, c.Finalize())
	require.NoError(t, c.DeleteProgram("P"))
	_, err := c.Bytes(h1)
	require.ErrorIs(t, err, cache.ErrStaleHandle)
	_, err = c.Bytes(cache.Handle{})
	require.ErrorIs(t, err, cache.ErrStaleHandle)

	require.NoError(t, c.InitializeForProgram("P"))
	h2, hit := pack(t, c, k)
	require.False(t, hit)
	require.NotEqual(t, h1, h2)
	_, err = c.Bytes(h1)
	require.ErrorIs(t, err, cache.ErrStaleHandle)
	require.NoError(t, c.Finalize())
}

// LookUpOrInsert's special forms: nil bytes after a hit (#18295), nil bytes
// for an absent key, bytes not from ReserveSpace, and equal bytes for a
// present key (the memcmp path) which returns the existing handle.
func TestLookUpOrInsertForms(t *testing.T) {
	c := open(t, cache.Options{Path: tempPath(t)})
	k := key("w", 1)
	require.NoError(t, c.InitializeForProgram("P"))
	_, err := c.LookUpOrInsert(k, nil)
	require.ErrorIs(t, err, cache.ErrNotFound)
	_, err = c.LookUpOrInsert(k, packed(k))
	require.ErrorIs(t, err, cache.ErrNotReserved)
	_, err = c.LookUpOrInsert(spec.Key{Weight: "a\x00b"}, nil)
	require.ErrorIs(t, err, cache.ErrInvalidKey)

	h, _ := pack(t, c, k)
	h2, err := c.LookUpOrInsert(k, nil)
	require.NoError(t, err)
	require.Equal(t, h, h2)

	buf, err := c.ReserveSpace(sizeOf(k))
	require.NoError(t, err)
	fillPacked(k, buf)
	h3, err := c.LookUpOrInsert(k, buf)
	require.NoError(t, err)
	require.Equal(t, h, h3, "equal bytes: the existing entry")
	_, err = c.LookUpOrInsert(k, buf)
	require.ErrorIs(t, err, cache.ErrAlreadyInserted, "a reservation is inserted once")
	require.NotErrorIs(t, err, cache.ErrNotReserved, "two mistakes, two errors")
	other, err := c.ReserveSpace(sizeOf(key("v", 1)))
	require.NoError(t, err)
	fillPacked(key("v", 1), other)
	_, err = c.LookUpOrInsert(key("v", 1), other)
	require.NoError(t, err)
	_, err = c.LookUpOrInsert(key("v", 1), other)
	require.ErrorIs(t, err, cache.ErrAlreadyInserted, "also when the first insert made a new entry")
	require.NoError(t, c.Finalize())
	require.Equal(t, uint64(2), c.Stats().Repacks[cache.RepackNew])
}

// Reference counts are per program and cannot wrap: deleting a program
// repeatedly is an error, not an underflow (ExecuTorch latent bug 6a,
// DeletePackedData_OnFromLoadEntries_PreservesMetadata).
func TestDeleteProgramCannotUnderflow(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(2, 1)
	process(t, opts, ks)
	c := open(t, opts)
	require.Equal(t, 2, launch(t, c, "P", ks))
	require.NoError(t, c.DeleteProgram("P"))
	for range 5 {
		require.ErrorIs(t, c.DeleteProgram("P"), cache.ErrUnknownProgram)
	}
	require.Len(t, c.Names(), 2, "file entries stay for the next program")
	require.Equal(t, 2, launch(t, c, "P", ks))
}

func TestProgramMisuse(t *testing.T) {
	c := open(t, cache.Options{})
	require.ErrorIs(t, c.Finalize(), cache.ErrNoProgram)
	require.NoError(t, c.InitializeForProgram("A"))
	require.ErrorIs(t, c.InitializeForProgram("B"), cache.ErrProgramActive)
	require.False(t, c.IsFinalized())
	require.NoError(t, c.Finalize())
	require.True(t, c.IsFinalized())
	require.NoError(t, c.Close())
	_, err := c.ReserveSpace(1)
	require.ErrorIs(t, err, cache.ErrClosed)
	_, hit := c.LookUp(key("w", 1))
	require.False(t, hit)
}

// G6 (threads): provider calls from many goroutines at once, as XNNPACK may
// make them, each get correct bytes; run with -race.
func TestG6ConcurrentProviderCalls(t *testing.T) {
	for _, path := range []string{"", tempPath(t)} {
		c := open(t, cache.Options{Path: path})
		ks := keys(32, 1)
		for round := range 2 {
			before := c.Stats()
			require.NoError(t, c.InitializeForProgram(fmt.Sprint("P", round)))
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range ks {
						pack(t, c, ks[(i+g*5)%len(ks)])
					}
				}()
			}
			wg.Wait()
			require.NoError(t, c.Finalize())
			require.NoError(t, c.Check())
			after := c.Stats()
			require.Len(t, c.Names(), len(ks))
			if round == 1 {
				require.Equal(t, before.Misses, after.Misses, "second round hits everything")
				require.Equal(t, before.Hits+8*uint64(len(ks)), after.Hits)
			}
		}
		if path != "" {
			require.Equal(t, uint64(32), process(t, cache.Options{Path: path}, ks).Hits)
		}
	}
}

// A handle of another cache is stale here, even when an entry with the same
// internal number exists.
func TestForeignHandleIsStale(t *testing.T) {
	a, b := open(t, cache.Options{}), open(t, cache.Options{})
	k := key("w", 1)
	require.NoError(t, a.InitializeForProgram("P"))
	require.NoError(t, b.InitializeForProgram("P"))
	ha, _ := pack(t, a, k)
	pack(t, b, key("other", 1))
	_, err := b.Bytes(ha)
	require.ErrorIs(t, err, cache.ErrStaleHandle)
	require.NoError(t, a.Finalize())
	require.NoError(t, b.Finalize())
}

// TestLookUpBeforeInitializationIsAnError: the file is loaded by the first
// InitializeForProgram, so a look-up before it would miss what the file
// holds and its re-pack could replace it. The look-up is counted as a
// misuse, and the reservation every miss leads to fails with
// ErrNotInitialized; nothing is written, and the file's entries still hit
// once a program is initialized.
func TestLookUpBeforeInitializationIsAnError(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(2, 1)
	process(t, opts, ks)
	before, err := os.ReadFile(opts.Path)
	require.NoError(t, err)

	c := open(t, opts)
	_, hit := c.LookUp(ks[0])
	require.False(t, hit)
	require.Equal(t, uint64(1), c.Stats().LookUpsBeforeInit)
	require.Equal(t, uint64(1), c.Stats().Misses, "a look-up before initialization answers a miss")
	_, err = c.ReserveSpace(sizeOf(ks[0]))
	require.ErrorIs(t, err, cache.ErrNotInitialized)
	_, err = c.LookUpOrInsert(ks[0], nil)
	require.ErrorIs(t, err, cache.ErrNotInitialized)
	require.NoError(t, c.Save())
	after, err := os.ReadFile(opts.Path)
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing written")

	require.NoError(t, c.InitializeForProgram("P"))
	_, hit = c.LookUp(ks[0])
	require.True(t, hit, "after initialization the file's entry is seen")
	require.NoError(t, c.Finalize())
	_, hit = c.LookUp(ks[1])
	require.True(t, hit, "look-ups after a program's finalize are allowed, as XNNPACK's provider allows them")
	require.Equal(t, uint64(1), c.Stats().LookUpsBeforeInit)
}

// An unnamed constant inserted outside any program (after Finalize, as
// XNNPACK's provider allows) is referenced by nothing and can never be
// looked up again, so the cache does not keep its bytes: heap memory held
// for it would be held until Close.
func TestUnnamedInsertOutsideProgramNotKept(t *testing.T) {
	c := open(t, cache.Options{Path: tempPath(t)})
	require.NoError(t, c.InitializeForProgram("P"))
	require.NoError(t, c.Finalize())
	k := spec.Key{Seed: 1}
	_, hit := c.LookUp(k)
	require.False(t, hit)
	buf, err := c.ReserveSpace(sizeOf(k))
	require.NoError(t, err)
	fillPacked(k, buf)
	_, err = c.LookUpOrInsert(k, buf)
	require.NoError(t, err)
	require.Zero(t, c.Stats().HeapBytes[cache.HeapUnnamed], "the cache keeps bytes nothing references")
}
