package runtime

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// fromFile returns p as read back from its program file after edit changed
// the unpacked weights and bias of layer i: the digest under test is the one
// ParseProgram computes, as for every program a user loads from a file.
func fromFile(t *testing.T, p *Program, i int, edit func(w, b []float32)) *Program {
	t.Helper()
	src := &fileSource{w: make([][]float32, p.NumLayers()), b: make([][]float32, p.NumLayers()), digests: make([]uint64, p.NumLayers())}
	for j, l := range p.layers {
		src.w[j], src.b[j] = make([]float32, l.N*l.K), make([]float32, l.N)
		p.Weights(j, src.w[j], src.b[j])
	}
	edit(src.w[i], src.b[i])
	q, err := newProgram(p.name, p.layers, src)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, EncodeProgram(&buf, q))
	r, err := ParseProgram(buf.Bytes())
	require.NoError(t, err)
	return r
}

// A model update that changes only one layer's bias, or only its weights,
// re-packs exactly that layer (reason source) and serves the new packing:
// outputs equal heap packing of the updated model bit for bit. A digest
// that covered only the weights (or only the bias) would hit and serve the
// stale packing (G1; a planted bug no test caught before).
func TestSourceChangeOfOnePartRepacks(t *testing.T) {
	p, err := Preset(PresetSmall, 3)
	require.NoError(t, err)
	const layer = 1
	require.True(t, p.Layer(layer).Bias)
	n := uint64(p.NumLayers())
	for _, tc := range []struct {
		name string
		edit func(w, b []float32)
	}{
		{"bias only", func(_, b []float32) { b[len(b)-1] += 0.5 }},
		{"weights only", func(w, _ []float32) { w[len(w)/2] += 0.5 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tempPath(t, "w.cache")
			base := fromFile(t, p, layer, func(_, _ []float32) {})
			rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: base})
			require.NoError(t, err)
			require.Equal(t, p.NumLayers(), rep.Packed)

			updated := fromFile(t, p, layer, tc.edit)
			assert.NotEqual(t, base.SourceDigest(layer), updated.SourceDigest(layer), "the source digest must change")
			rep, err = Launch(context.Background(), LaunchConfig{CachePath: path, Program: updated, Verify: true})
			require.NoError(t, err)
			assert.Equal(t, spec.LoadOK, rep.Load)
			assert.Equal(t, n-1, rep.Hits, "every other layer still hits")
			assert.Equal(t, uint64(1), rep.Repacks[cache.RepackSource], "repacks %v", rep.Repacks)
			assert.True(t, rep.Verified, "served the stale packing of layer %d", layer)
		})
	}
}
