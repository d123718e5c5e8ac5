package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// Under on-compute the generator draws inferences after finalize and,
// with foreign writes among them, corruption found there: the random runs
// of model/conformance's TestConformanceOnCompute (compute) are not
// vacuous. Each sequence runs in lockstep with the cache.
func TestGeneratedOnComputeRepacks(t *testing.T) {
	d, err := model.DesignByName("on-compute")
	require.NoError(t, err)
	b := model.DefaultBounds()
	computes, repacks, toFile := 0, 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		ops := Generate(seed, 60, d, b, GenOptions{Power: true})
		outs, err := model.Replay(&d, b, ops)
		require.NoError(t, err)
		for _, o := range outs {
			if o.Op.Kind != spec.OpCompute {
				continue
			}
			computes++
			if o.Events&model.EvtComputeRepack != 0 {
				repacks++
				if o.Result.Place == spec.PlaceFile {
					toFile++
				}
			}
		}
		require.NoError(t, RunOps(Config{Backend: BackendCrashFS}, d.Name, b, ops), "seed %d", seed)
	}
	t.Logf("60 sequences: %d computes, %d re-packs at compute, %d of them into the file", computes, repacks, toFile)
	assert.Greater(t, computes, 30)
	assert.Positive(t, repacks)
	assert.Positive(t, toFile)
}
