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
			opts := cache.Options{Path: filepath.Join(t.TempDir(), "c"), Format: f, VerifyData: cache.VerifyOnCompute}
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
