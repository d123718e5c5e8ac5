package runtime

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// A cold launch is cut at every mutating filesystem call, by a process
// crash and by power losses; then the app is launched twice more on the
// disk the crash left. The crashed launch still answers correctly (it runs
// from memory, G8), the relaunch loads a committed index or rebuilds and
// answers correctly (G2, G7, G8), and the launch after it packs nothing and
// hits every layer (G3: at most one launch re-packs).
func TestLaunchCrashAndRelaunch(t *testing.T) {
	p, err := Preset(PresetSmall, 21)
	require.NoError(t, err)
	// q has p's tensor names with other weights: launching it over p's
	// file re-packs every layer and commits over a live index.
	q, err := Preset(PresetSmall, 22)
	require.NoError(t, err)
	t.Run("cold", func(t *testing.T) { crashSweep(t, nil, p) })
	t.Run("update", func(t *testing.T) { crashSweep(t, p, q) })
}

func crashSweep(t *testing.T, before, p *Program) {
	const dir, path = "/data", "/data/model.cache"
	n := uint64(p.NumLayers())
	launch := func(fs vfs.FS, prog *Program, what string) LaunchReport {
		rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: prog, FS: fs, Verify: true})
		require.NoError(t, err, what)
		require.True(t, rep.Verified, "%s: output differs from heap packing", what)
		return rep
	}
	// newFS is the disk as the crashing launch finds it.
	newFS := func() *crashfs.FS {
		fs := crashfs.New(crashfs.Options{})
		require.NoError(t, fs.MkdirAll(dir))
		if before != nil {
			launch(fs, before, "setup")
		}
		return fs
	}

	probe := newFS()
	start := probe.Ops()
	launch(probe, p, "uncrashed")
	ops := probe.Ops()
	require.Greater(t, ops, start)

	crashes := []struct {
		name  string
		crash func(*crashfs.FS) *crashfs.FS
	}{
		{"process", (*crashfs.FS).ProcessCrash},
		{"power-none-kept", func(f *crashfs.FS) *crashfs.FS { return f.PowerLossWith(crashfs.LossConfig{Seed: 1, Keep: 0}) }},
		{"power-half-kept", func(f *crashfs.FS) *crashfs.FS { return f.PowerLoss(2) }},
	}
	for point := start; point <= ops; point++ {
		for _, c := range crashes {
			what := fmt.Sprintf("%s crash after op %d of %d", c.name, point, ops)
			fs := newFS()
			fs.SetCrashAfter(point)
			launch(fs, p, what)
			disk := c.crash(fs)
			rep := launch(disk, p, what+", relaunch")
			// G2: the crash leaves the previous committed index or the new
			// one, never a file the next launch must reject.
			require.NotEqual(t, spec.LoadRejected, rep.Load, "%s: %v", what, rep.LoadErr)
			if before != nil {
				require.Equal(t, spec.LoadOK, rep.Load, "%s: %v", what, rep.LoadErr)
			}
			rep = launch(disk, p, what+", second relaunch")
			require.Zero(t, rep.Packed, "%s: second relaunch packed again (G3)", what)
			require.Equal(t, n, rep.Hits, "%s", what)
		}
	}
	t.Logf("%d crash points × %d crash kinds", ops-start+1, len(crashes))
}
