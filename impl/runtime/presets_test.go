package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/kernels"
)

func TestPresets(t *testing.T) {
	_, err := Preset("nope", 1)
	require.ErrorIs(t, err, ErrUnknownPreset)

	def := kernels.NewRegistry().Default()
	packed := func(p *Program) (total int64) {
		for _, l := range p.Layers() {
			total += int64(def.PackedSize(l.N, l.K))
		}
		return total
	}
	small, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	assert.Less(t, packed(small), int64(1<<20))

	llama, err := Preset(PresetLlama1184, 1)
	require.NoError(t, err)
	// ExecuTorch PR 19988: 1,184 packed weights, about 593 MB.
	assert.Equal(t, 1184, llama.NumLayers())
	assert.InDelta(t, 593e6, float64(packed(llama)), 593e6*0.005, "default kernel %s", def.Name())
	assert.Equal(t, llamaDim, llama.OutputDim())
}
