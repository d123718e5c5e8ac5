package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// V2Allow keeps out what v2 is not held to (foreign writes, source
// changes, options) and, on crashfs only, still lets through what the v2
// property exists to exercise: crashes inside a commit, whose file ends in
// the writer's appended space, and power losses.
func TestV2AllowGenerates(t *testing.T) {
	d, err := V2Design()
	require.NoError(t, err)
	b := model.DefaultBounds()
	b.Names = 2
	for _, backend := range []Backend{BackendCrashFS, BackendOS} {
		count := map[string]int{}
		for seed := uint64(1); seed <= 600; seed++ {
			ops := Generate(seed, 40, d, b, GenOptions{Power: backend == BackendCrashFS, Allow: V2Allow(backend)})
			require.True(t, allowed(d, b, ops, V2Allow(backend)))
			for _, op := range ops {
				switch {
				case op.Kind == spec.EvForeign || op.Kind == spec.EvSourceChange || op.Kind == spec.EvClobberOptions:
					count["excluded"]++
				case op.Kind == spec.EvCrash && op.Branch == spec.BranchMidSave:
					count["mid-save"]++
				case op.Kind == spec.EvCrash && op.Crash == spec.CrashPower:
					count["power"]++
				}
			}
		}
		t.Logf("%s: %v", backend, count)
		assert.Zero(t, count["excluded"], backend)
		if backend == BackendCrashFS {
			assert.Positive(t, count["mid-save"])
			assert.Positive(t, count["power"])
		} else {
			assert.Zero(t, count["mid-save"]+count["power"], backend)
		}
	}
}
