package sim

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// TestRandomConformance runs seeded random op sequences of the reference
// design in lockstep; a failure other than a known divergence is shrunk
// and printed as a trace that can be pasted into a scenario file.
func TestRandomConformance(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.DefaultBounds()
	for _, tc := range []struct {
		name        string
		gen         GenOptions
		runs, steps int
		names       int
	}{
		{"crashfs", GenOptions{Power: true}, 60, 60, 1},
		{"crashfs-3names", GenOptions{Power: true}, 30, 80, 3},
		{"os", GenOptions{}, 10, 60, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := b
			b.Names = tc.names
			backend := BackendCrashFS
			if tc.name == "os" {
				backend = BackendOS
			}
			known := map[string]int{}
			clean := 0
			for seed := uint64(1); seed <= uint64(tc.runs); seed++ {
				cfg := Config{Backend: backend, Dir: t.TempDir()}
				ops := Generate(seed, tc.steps, d, b, tc.gen)
				err := RunOps(cfg, "", b, ops)
				var kd *KnownDivergenceError
				switch {
				case err == nil:
					clean++
					continue
				case errors.As(err, &kd):
					known[kd.ID]++
					continue
				}
				sig := Signature(err)
				small := Shrink(ops, func(o []spec.Op) bool { return Replayable(d, b, o) },
					func(o []spec.Op) bool {
						return Signature(RunOps(Config{Backend: backend, Dir: t.TempDir()}, "", b, o)) == sig
					})
				t.Errorf("seed %d: %v\nshrunk to %d ops:\n%s", seed, err, len(small), spec.FormatTrace(small))
			}
			t.Logf("%d clean runs; stopped at known divergences: %v", clean, known)
			// Most runs must get through: a generator that always hits a
			// known divergence early would test nothing.
			assert.Greater(t, clean, tc.runs/2)
		})
	}
}

func TestShrinkIsOneMinimal(t *testing.T) {
	ops, err := spec.ParseTrace("init proc=A program=P1\nupgrade-kernel\nlookup proc=A name=w0\nrestart proc=A\nrestart proc=B\n")
	require.NoError(t, err)
	// "fails" when both the upgrade and a restart of B are present.
	fails := func(o []spec.Op) bool {
		up, rb := false, false
		for _, x := range o {
			up = up || x.Kind == spec.EvKernelUpgrade
			rb = rb || (x.Kind == spec.EvRestart && x.Proc == 1)
		}
		return up && rb
	}
	got := Shrink(ops, func([]spec.Op) bool { return true }, fails)
	assert.Equal(t, "upgrade-kernel\nrestart proc=B\n", spec.FormatTrace(got))
}
