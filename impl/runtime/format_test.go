package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// A model update keeps tensor names and shapes and changes the weights.
// v3 keys carry the source digest, so the updated model misses, re-packs
// and computes correctly (G1). v2, ExecuTorch's format, keys by name and
// seed only: the updated model hits the old packs and computes with the
// old weights (ExecuTorch latent issue 4), which Launch's Verify reports.
// This pins what v2 gives up (docs/runtime.md).
func TestModelUpdateV3RepacksV2ServesStale(t *testing.T) {
	old, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	updated, err := Preset(PresetSmall, 2)
	require.NoError(t, err)
	n := uint64(old.NumLayers())
	for _, tc := range []struct {
		format    spec.Format
		wantFresh bool
	}{
		{spec.FormatV3, true},
		{spec.FormatV2, false},
	} {
		t.Run(tc.format.String(), func(t *testing.T) {
			path := tempPath(t, "update.cache")
			launch := func(p *Program) LaunchReport {
				rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Format: tc.format, Verify: true})
				require.NoError(t, err)
				return rep
			}
			require.True(t, launch(old).Verified)
			rep := launch(updated)
			require.Equal(t, spec.LoadOK, rep.Load)
			if tc.wantFresh {
				assert.True(t, rep.Verified)
				assert.Equal(t, n, rep.Repacks[cache.RepackSource])
				assert.Zero(t, rep.Hits)
			} else {
				assert.False(t, rep.Verified, "v2 detected a source change it has no field for")
				assert.Equal(t, n, rep.Hits)
				assert.Zero(t, rep.Packed)
			}
		})
	}
}
