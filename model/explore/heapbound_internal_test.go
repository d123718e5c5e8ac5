package explore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
)

// TestMaxHeapBytesCountsTheHeapOnce: the fingerprint mode's tables live on
// the Go heap, so the bound compares the heap alone with MaxHeapBytes; a heap
// just under the bound must not stop a run in any mode, and one just over it
// must stop each.
func TestMaxHeapBytesCountsTheHeapOnce(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.ExhaustiveBounds()
	b.Kernels = 1 // small, and explored to the end
	const heap = 64 << 20
	for _, fp := range []bool{false, true} {
		for _, workers := range []int{1, 2} {
			for _, bound := range []uint64{heap, heap - 1} {
				r, err := Run(d, Options{Bounds: b, Fingerprints: fp, Workers: workers,
					MaxHeapBytes: bound, heapBytes: func() uint64 { return heap }, TempFiles: newTestTemp(t)})
				require.NoError(t, err)
				over := bound < heap
				require.Equal(t, over, r.OutOfMemory, "fingerprints %v workers %d bound %d", fp, workers, bound)
				require.Equal(t, !over, r.Exhausted, "fingerprints %v workers %d bound %d", fp, workers, bound)
			}
		}
	}
}
