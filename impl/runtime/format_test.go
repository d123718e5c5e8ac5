package runtime

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
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

// v2Origins are the v2 files a launch may find: ExecuTorch's own layouts
// and one xpwc wrote with Format v2.
func v2Origins(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, f := range spectest.ExecuTorchFiles() {
		files[f.Name] = f.File
	}
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	path := tempPath(t, "xpwc-v2.cache")
	_, err = Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Format: spec.FormatV2})
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	files["xpwc-v2.cache"] = b
	return files
}

// A launch that names no format keeps a v2 file v2, whoever wrote it: the
// entries it does not use survive, and ExecuTorch's loader still loads
// every one (docs/paths.md). Converting is for a caller that names v3.
func TestLaunchWithoutFormatKeepsV2(t *testing.T) {
	for name, file := range v2Origins(t) {
		t.Run(name, func(t *testing.T) {
			path := tempPath(t, name)
			require.NoError(t, os.WriteFile(path, file, 0o600))
			before, err := spec.Parser{}.ParseV2(bytes.NewReader(file), int64(len(file)))
			require.NoError(t, err)
			p, err := Preset(PresetSmall, 1)
			require.NoError(t, err)
			for range 2 {
				rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Verify: true})
				require.NoError(t, err)
				require.Equal(t, spec.LoadOK, rep.Load)
				require.Equal(t, spec.FormatV2, rep.Format)
				require.True(t, rep.Verified)
			}
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			got, err := spec.Parser{}.ParseV2(bytes.NewReader(after), int64(len(after)))
			require.NoError(t, err, "the file is no longer v2")
			names := map[string]spec.Entry{}
			for _, e := range got.Entries {
				names[e.Key.Weight] = e
			}
			for _, e := range before.Entries {
				if usedBy(e, p) {
					continue // the program's own (xpwc's v2 file): hit as they are
				}
				g, ok := names[e.Key.Weight]
				require.True(t, ok, "entry %s lost", e.Key.Weight)
				require.Equal(t, e.Key.Seed, g.Key.Seed)
				require.Equal(t, file[e.Offset:e.Offset+e.Size], after[g.Offset:g.Offset+g.Size], "entry %s changed", e.Key.Weight)
			}
			v, err := spec.ExecuTorchLoad(bytes.NewReader(after), int64(len(after)))
			require.NoError(t, err)
			require.True(t, v.Accepts)
			require.Equal(t, len(got.Entries), v.Entries)
			require.Equal(t, len(before.Entries)+p.NumLayers()-overlap(before.Entries, p), v.Entries)
		})
	}
}

// usedBy reports whether program p packs a tensor under e's v2 name.
func usedBy(e spec.Entry, p *Program) bool {
	for _, l := range p.Layers() {
		if l.WeightName()+l.BiasName() == e.Key.Weight {
			return true
		}
	}
	return false
}

// overlap counts the entries of es that program p packs.
func overlap(es []spec.Entry, p *Program) int {
	n := 0
	for _, e := range es {
		if usedBy(e, p) {
			n++
		}
	}
	return n
}
