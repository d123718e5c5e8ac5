package cache_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// TestLookUpAllocatesNothing holds the warm launch's look-ups to no
// allocation in either format (issue: look-ups cost 2.4x ExecuTorch's): a
// hit in a program's first pass, which adds the entry to the program's
// set, and the hits after it. A v2 name is the concatenation of the key's
// names, which must not be built as a new string per look-up.
func TestLookUpAllocatesNothing(t *testing.T) {
	ks, sizes := benchKeys()
	// The last 200: names of over 32 bytes, which a concatenation does
	// not build in a buffer on the stack.
	ks, sizes = ks[len(ks)-200:], sizes[len(sizes)-200:]
	for _, f := range []spec.Format{spec.FormatV2, spec.FormatV3} {
		t.Run(f.String(), func(t *testing.T) {
			// No prefault walk: it runs beside the look-ups and allocates
			// its list when it starts, and the count below is the whole
			// process's.
			opts := cache.Options{Path: filepath.Join(t.TempDir(), "c"), Format: f, VerifyData: cache.VerifyOnCompute, DisablePrefault: true}
			fill := open(t, opts)
			require.NoError(t, fill.InitializeForProgram("p"))
			for i, k := range ks {
				buf, err := fill.ReserveSpace(sizes[i])
				require.NoError(t, err)
				fillPacked(k, buf)
				_, err = fill.LookUpOrInsert(k, buf)
				require.NoError(t, err)
			}
			require.NoError(t, fill.Finalize())

			c := open(t, opts)
			require.NoError(t, c.InitializeForProgram("warm"))
			// The whole first pass is counted, not an average per call
			// (AllocsPerRun rounds down): a set that grows through powers
			// of two allocates a few times in 200 look-ups.
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for _, k := range ks {
				if _, hit := c.LookUp(k); !hit {
					t.Fatalf("%s missed", k.Weight)
				}
			}
			runtime.ReadMemStats(&after)
			require.Zero(t, after.Mallocs-before.Mallocs, "allocations in a first pass of %d look-ups", len(ks))
			again := testing.AllocsPerRun(100, func() {
				if _, hit := c.LookUp(ks[7]); !hit {
					t.Fatal("missed")
				}
			})
			require.Zero(t, again, "allocations per repeated look-up")
			require.NoError(t, c.Finalize())
		})
	}
}

// TestWarmLoadAllocationBound holds the core of a warm launch (Open,
// InitializeForProgram, every look-up; BenchmarkWarmLoadCore1184) of the
// 1,184-entry program to a bound on the heap it allocates. Each new heap
// page is a page fault in a fresh process, the larger part of a warm
// launch's CPU on a machine whose first touches trap. The bound holds what
// a load needs: per entry the parsed index entry, the cache's entry (40
// bytes), its slots in the name and handle tables; per file the names,
// copied from the mapping the index is decoded from in place (reading the
// index into a buffer, or copying the names out of one, failed this test).
// The program's set of entries is a bitmap of ids, an entry points at its
// record in the parsed index instead of copying offset, checksum and copy
// identity, and the name and handle tables hold entry pointers (a map of
// ids, keys copied, a map keyed by names or one keyed by ids, or entries
// with their own copies of those fields or a slice of their bytes failed
// it).
func TestWarmLoadAllocationBound(t *testing.T) {
	ks, sizes := benchKeys()
	bound := map[spec.Format]uint64{spec.FormatV2: 240 << 10, spec.FormatV3: 250 << 10}
	for _, f := range []spec.Format{spec.FormatV2, spec.FormatV3} {
		t.Run(f.String(), func(t *testing.T) {
			opts := cache.Options{Path: filepath.Join(t.TempDir(), "c"), Format: f, VerifyData: cache.VerifyOnCompute, DisablePrefault: true}
			benchLaunch(t, opts, ks, sizes)
			got, n := warmAllocated(t, opts, ks, false)
			t.Logf("%s: %d bytes in %d allocations for %d entries", f, got, n, len(ks))
			require.LessOrEqual(t, got, bound[f], "bytes allocated by a warm load of %d entries", len(ks))
		})
	}
}

// warmAllocated opens a warm cache with opts, initializes a program and
// looks every key of ks up (and finalizes, with finalize), and returns the
// bytes and the number of allocations that took.
func warmAllocated(t *testing.T, opts cache.Options, ks []spec.Key, finalize bool) (bytes, allocs uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c, err := cache.Open(opts)
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("warm"))
	for _, k := range ks {
		if _, hit := c.LookUp(k); !hit {
			t.Fatalf("%s missed", k.Weight)
		}
	}
	if finalize {
		require.NoError(t, c.Finalize())
	}
	runtime.ReadMemStats(&after)
	if !finalize {
		require.NoError(t, c.Finalize())
	}
	require.NoError(t, c.Close())
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}

// TestVerifyAheadAllocatesNoList: a warm launch's verifying walk over a
// file in file order (every file xpwc writes) walks the load's own entries
// and records: starting it allocates no more than starting the populating
// walk it replaces. A list of the entries and a copy of their ranges (28
// KiB for 1,184 entries, 7 fresh pages in a fresh process) failed it.
func TestVerifyAheadAllocatesNoList(t *testing.T) {
	ks, sizes := benchKeys()
	path := filepath.Join(t.TempDir(), "c")
	opts := cache.Options{Path: path, Format: spec.FormatV3, VerifyData: cache.VerifyOnCompute, DisableVerifyAhead: true}
	benchLaunch(t, opts, ks, sizes)
	populating, _ := warmAllocated(t, opts, ks, true)
	ahead := opts
	ahead.DisableVerifyAhead = false
	verifying, _ := warmAllocated(t, ahead, ks, true)
	t.Logf("populating walk: %d bytes, verifying walk: %d bytes", populating, verifying)
	require.LessOrEqual(t, verifying, populating+1<<10, "bytes a warm init allocates with the verifying walk beyond the populating one")
}
