package explore

import (
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
