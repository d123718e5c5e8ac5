package runtime

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
)

// A program of the caller's weights: it keeps copies (a later change of
// the caller's slices changes nothing), its layers' digests are those of
// the same program read from a file, a launch caches it like a preset, and
// a changed weight is a miss with reason source (G1).
func TestNewProgramFromCallersWeights(t *testing.T) {
	p, err := Preset(PresetSmall, 3)
	require.NoError(t, err)
	layers := p.Layers()
	ws, bs := make([][]float32, len(layers)), make([][]float32, len(layers))
	for i, l := range layers {
		ws[i], bs[i] = make([]float32, l.N*l.K), make([]float32, l.N)
		p.Weights(i, ws[i], bs[i])
		if !l.Bias {
			bs[i] = nil
		}
	}
	q, err := NewProgram("mine", layers, ws, bs)
	require.NoError(t, err)
	ws[0][0]++ // the program holds copies
	path := filepath.Join(t.TempDir(), "mine.prog")
	require.NoError(t, WriteProgramFile(path, q))
	r, err := ReadProgramFile(path)
	require.NoError(t, err)
	for i := range layers {
		require.Equal(t, r.SourceDigest(i), q.SourceDigest(i), "layer %d", i)
	}

	cachePath := filepath.Join(t.TempDir(), "c.xpwc")
	cold, err := Launch(context.Background(), LaunchConfig{CachePath: cachePath, Program: q, Verify: true})
	require.NoError(t, err)
	require.True(t, cold.Verified)
	warm, err := Launch(context.Background(), LaunchConfig{CachePath: cachePath, Program: q})
	require.NoError(t, err)
	require.Equal(t, uint64(len(layers)), warm.Hits)
	require.Equal(t, cold.OutputDigest, warm.OutputDigest)

	changed, err := NewProgram("mine", layers, ws, bs) // ws[0][0] changed above
	require.NoError(t, err)
	rep, err := Launch(context.Background(), LaunchConfig{CachePath: cachePath, Program: changed})
	require.NoError(t, err)
	require.Equal(t, uint64(1), rep.Repacks[cache.RepackSource])
}

// Weights that do not fit the layers are a *ProgramError naming the layer.
func TestNewProgramRejectsMismatchedWeights(t *testing.T) {
	layers := []Layer{{Name: "a", N: 2, K: 3, Bias: true}}
	var pe *ProgramError
	_, err := NewProgram("p", layers, nil, nil)
	require.ErrorAs(t, err, &pe)
	_, err = NewProgram("p", layers, [][]float32{make([]float32, 5)}, [][]float32{make([]float32, 2)})
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "a", pe.Layer)
	_, err = NewProgram("p", layers, [][]float32{make([]float32, 6)}, nil)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "bias", pe.Field)
	_, err = NewProgram("p", layers, [][]float32{make([]float32, 6)}, [][]float32{make([]float32, 2)})
	require.NoError(t, err)
}
