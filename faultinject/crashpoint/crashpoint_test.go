package crashpoint

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// outcomes is the power-loss sample per crash point; XPWC_LONG=1 raises it.
func outcomes() int {
	if os.Getenv("XPWC_LONG") == "1" {
		return 256
	}
	return 16
}

func TestCrashPointsV3(t *testing.T) {
	total := 0
	for _, w := range Workloads(6) {
		t.Run(w.Name, func(t *testing.T) {
			rep, err := Enumerate(Config{Format: spec.FormatV3, Outcomes: outcomes(), Seed: 1}, w)
			require.NoError(t, err)
			t.Log(rep)
			total += rep.States
			require.Positive(t, rep.Ops)
			for i, v := range rep.Violations {
				if i == 10 {
					t.Logf("... %d more", len(rep.Violations)-10)
					break
				}
				t.Errorf("%s", v)
			}
			assert.Empty(t, rep.Violations, "v3 must keep G1, G2, G3 and G7 at every crash point")
		})
	}
	t.Logf("v3: %d crash states checked", total)
}

// v2 has no commit point: the test records which guarantees fail and where
// (docs/faults.md), and fails only on a panic.
func TestCrashPointsV2(t *testing.T) {
	total := 0
	for _, w := range Workloads(6) {
		t.Run(w.Name, func(t *testing.T) {
			rep, err := Enumerate(Config{Format: spec.FormatV2, Outcomes: outcomes(), Seed: 1}, w)
			require.NoError(t, err)
			t.Log(rep)
			total += rep.States
			seen := map[string]bool{}
			for _, v := range rep.Violations {
				if !seen[v.Guarantee] {
					seen[v.Guarantee] = true
					t.Logf("first %s", v)
				}
				assert.NotContains(t, v.Detail, "panicked", v.String())
			}
		})
	}
	t.Logf("v2: %d crash states checked", total)
}

// Every fault of G8 at every seam call of every workload: the launch goes
// on (heap fallback), never serves wrong bytes, and the file recovers.
func TestErrorPoints(t *testing.T) {
	for _, format := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		var injected int64
		for _, w := range Workloads(4) {
			t.Run(format.String()+"/"+w.Name, func(t *testing.T) {
				rep, err := EnumerateErrors(Config{Format: format, Outcomes: 1}, w)
				require.NoError(t, err)
				t.Log(rep)
				injected += rep.Injected
				assert.Positive(t, rep.Injected)
				assert.Positive(t, rep.Fallbacks, "faults must reach the cache and be recorded")
				// v3 keeps every guarantee. v2 loses its commit when an
				// append fails after growing the file (no commit point,
				// docs/faults.md); the cache's consistency check reports the
				// unparsable file the same way. G1 and G8 hold for both.
				first := map[string]bool{}
				for _, v := range rep.Violations {
					expected := format == spec.FormatV2 && (v.Guarantee == "G2" || v.Guarantee == "G7")
					if !expected {
						t.Errorf("%s", v)
					} else if !first[v.Guarantee] {
						first[v.Guarantee] = true
						t.Logf("v2 %s", v)
					}
				}
			})
		}
		t.Logf("%s: %d errors injected", format, injected)
	}
}

// A weight whose bytes end in a forged v2 trailer, and a crash before the
// real index: v3 ignores the forgery at every crash point; v2 serves it.
func TestForgedTrailerCrashPoints(t *testing.T) {
	for _, format := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		rep, err := Enumerate(Config{Format: format, Outcomes: outcomes(), Seed: 1}, ForgedTrailer(4))
		require.NoError(t, err)
		t.Log(rep)
		by := rep.ByGuarantee()
		if format == spec.FormatV3 {
			assert.Empty(t, rep.Violations)
			for i, v := range rep.Violations {
				if i < 5 {
					t.Errorf("%s", v)
				}
			}
		} else {
			assert.Positive(t, by["G1"], "v2 accepts an index forged in weight bytes after a crash")
			for _, v := range rep.Violations {
				if v.Guarantee == "G1" {
					t.Logf("v2 first G1: %s", v)
					break
				}
			}
		}
	}
}

// Random faults over a sequence of launches, then recovery with and without
// a power loss: v3 keeps G1, G2, G3 and G8.
func TestRandomFaults(t *testing.T) {
	runs := 40
	if os.Getenv("XPWC_LONG") == "1" {
		runs = 1000
	}
	for _, format := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		rep, err := RandomRuns(Config{Format: format, Seed: 7}, runs, 0.03)
		require.NoError(t, err)
		t.Log(rep)
		assert.Positive(t, rep.Injected)
		assert.Positive(t, rep.Saves, "some saves must succeed for G2 to be tested")
		for i, v := range rep.Violations {
			expected := format == spec.FormatV2 && (v.Guarantee == "G2" || v.Guarantee == "G7")
			if !expected {
				t.Errorf("run %d, %s crash: %s %s (faults: %s)", v.Point, v.Crash, v.Guarantee, v.Detail, v.LastOp)
			} else if i == 0 {
				t.Logf("v2: run %d, %s crash: %s %s", v.Point, v.Crash, v.Guarantee, v.Detail)
			}
		}
	}
}

// A crash anywhere in a compaction (or an upgrade), then a launch that
// appends and returns success, then a power loss: the launch's save holds.
func TestTwoCrashes(t *testing.T) {
	ws := Workloads(6)
	k3 := Upgrade(Upgrade(Keys(6, 1)))
	for _, w := range []Workload{ws[1], ws[2]} {
		for _, ratio := range []float64{0, -1} {
			rep, err := TwoCrashes(Config{Format: spec.FormatV3, Outcomes: outcomes(), Seed: 1, CompactGarbageRatio: ratio}, w, k3)
			require.NoError(t, err)
			t.Logf("compaction ratio %v: %s", ratio, rep)
			for i, v := range rep.Violations {
				if i < 5 {
					t.Errorf("%s", v)
				}
			}
		}
	}
}

// A random-fault run is reproducible from its seed.
func TestRandomFaultsReproducible(t *testing.T) {
	a, err := RandomRuns(Config{Format: spec.FormatV3, Seed: 11}, 10, 0.05)
	require.NoError(t, err)
	b, err := RandomRuns(Config{Format: spec.FormatV3, Seed: 11}, 10, 0.05)
	require.NoError(t, err)
	assert.Equal(t, a.String(), b.String())
	assert.Positive(t, a.Injected)
}

// Every disk size from empty to enough, 1 KiB apart: a full disk is a
// recorded fallback, never a failure or a wrong byte, and once space is
// freed the cache converges.
func TestFullDisk(t *testing.T) {
	for _, format := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		rep, err := FullDisk(Config{Format: format}, 1024)
		require.NoError(t, err)
		t.Log(rep)
		assert.Positive(t, rep.Fallbacks, "small disks must make the cache fall back")
		for i, v := range rep.Violations {
			expected := format == spec.FormatV2 && (v.Guarantee == "G2" || v.Guarantee == "G7")
			if !expected && i < 10 {
				t.Errorf("disk of %d bytes: %s %s", v.Point, v.Guarantee, v.Detail)
			}
		}
	}
}

// Power loss at page granularity (the page cache writes back whole pages):
// the cold workload always, every workload in long mode.
func TestCrashPointsV3PageLoss(t *testing.T) {
	ws := Workloads(6)
	if os.Getenv("XPWC_LONG") != "1" {
		ws = ws[:1]
	}
	for _, w := range ws {
		rep, err := Enumerate(Config{Format: spec.FormatV3, Outcomes: outcomes(), Seed: 2, LossUnit: 4096}, w)
		require.NoError(t, err)
		t.Logf("4 KiB loss unit: %s", rep)
		for i, v := range rep.Violations {
			if i < 5 {
				t.Errorf("%s", v)
			}
		}
	}
}

// Weights of several pages each, so that power losses tear regions across
// many sectors (sampled outcomes).
// v3 upgrade in go test; both workloads and both formats in long mode.
func TestCrashPointsLargeWeights(t *testing.T) {
	formats, ws := []spec.Format{spec.FormatV3}, Large(4)[1:]
	if os.Getenv("XPWC_LONG") == "1" {
		formats, ws = []spec.Format{spec.FormatV3, spec.FormatV2}, Large(4)
	}
	for _, format := range formats {
		for _, w := range ws {
			rep, err := Enumerate(Config{Format: format, Outcomes: outcomes(), Seed: 3}, w)
			require.NoError(t, err)
			t.Log(rep)
			for i, v := range rep.Violations {
				expected := format == spec.FormatV2 && v.Guarantee == "G2"
				if !expected && i < 5 {
					t.Errorf("%s", v)
				}
			}
		}
	}
}
