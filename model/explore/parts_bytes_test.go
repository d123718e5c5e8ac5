package explore

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
)

// The visited set split into one part a worker counts its memory as the
// one set does: each part's slots and numbers, and the search numbers the
// liveness graph names states by. The parts are sized by their own
// growth, so the two figures agree within a factor of two.
func TestPartsVisitedBytes(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := livenessBounds
	b.Kernels = 1
	for _, live := range []bool{false, true} {
		one, err := Run(d, Options{Bounds: b, Liveness: live, Workers: 1})
		require.NoError(t, err)
		two, err := Run(d, Options{Bounds: b, Liveness: live, Workers: 2})
		require.NoError(t, err)
		require.Equal(t, one.States, two.States)
		assert.GreaterOrEqual(t, two.VisitedBytes, one.VisitedBytes/2, "liveness %v", live)
		assert.LessOrEqual(t, two.VisitedBytes, one.VisitedBytes*2, "liveness %v", live)
	}
}

// VisitedBytes is the memory the visited set holds: with two parts keeping
// state numbers (the liveness check in memory), bytes counts each part's
// slots, the numbers beside them and the search numbers, within 5 % of
// what the heap grew by to hold them (the tables' old sizes collected).
func TestPartsBytesAreTheHeapTheyHold(t *testing.T) {
	const states = 500_000
	for _, ids := range []bool{false, true} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		v := newMemParts(2, ids)
		fp := uint64(0x9e3779b97f4a7c15)
		for i := range states {
			fp = fp*6364136223846793005 + 1442695040888963407
			p := partOf(fp, len(v.sets))
			_, added := v.sets[p].addID(fp, v.next[p])
			require.True(t, added)
			v.next[p]++
			if v.global != nil {
				v.global[p].add(int32(i))
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
		got := float64(v.bytes())
		assert.InEpsilon(t, held, got, 0.05, "ids %v: bytes %.0f, heap grew by %.0f", ids, got, held)
		runtime.KeepAlive(v)
	}
}

// The fingerprint table's parts release memory as often as one table does:
// one ask of n parts in n is passed on.
func TestTablePartsReleaseOneAskInN(t *testing.T) {
	releases := 0
	v := newTableParts(3, func() { releases++ })
	for i := range 9 {
		v.tabs[i%3].release()
	}
	assert.Equal(t, 3, releases)
}
