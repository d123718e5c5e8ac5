package crashpoint

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// Long random histories: twelve launches with random kernel versions, each
// either clean, under random faults, or crashed at a random call; after
// crashes and at random moments the machine restarts (process crash or
// power loss) and a launch over the last saved keys must hit them all (G2)
// with right bytes (G1). Reproducible from the run number.
func TestRandomHistories(t *testing.T) {
	runs := 60
	if os.Getenv("XPWC_LONG") == "1" {
		runs = 1000
	}
	opts := cache.Options{Path: Path, Format: spec.FormatV3}
	var launches, restarts, checked int
	for run := 0; run < runs; run++ {
		rng := rand.New(rand.NewPCG(uint64(run), 5))
		fsys := crashfs.New(crashfs.Options{})
		require.NoError(t, fsys.MkdirAll(Dir))
		var saved []spec.Key
		for step := 0; step < 12; step++ {
			ks := Keys(5, uint32(1+rng.IntN(3)))
			var inj errorfs.Injector = errorfs.None
			switch rng.IntN(3) {
			case 1:
				fsys.SetCrashAfter(fsys.Ops() + rng.IntN(20))
			case 2:
				inj = RandomFaults(0.1, uint64(run*100+step))
			}
			launches++
			r, err := Launch(errorfs.Wrap(fsys, errorfs.NewToggle(inj)), opts, ks)
			crashed := fsys.CrashPointReached()
			fsys.SetCrashAfter(-1)
			switch {
			case crashed:
				// It may have committed before the crash point.
				saved = withoutWeights(saved, ks)
			case err != nil:
				t.Fatalf("run %d step %d: launch failed (G8): %v", run, step, err)
			case len(r.Wrong) > 0:
				t.Fatalf("run %d step %d: wrong bytes (G1)", run, step)
			default:
				saved, _ = savedAfter(saved, ks, r)
			}
			if !crashed && rng.IntN(4) != 0 {
				continue
			}
			restarts++
			if rng.IntN(2) == 0 {
				fsys = fsys.ProcessCrash()
			} else {
				fsys = fsys.PowerLoss(uint64(run*1000 + step))
			}
			if len(saved) == 0 {
				continue
			}
			checked++
			r, err = Launch(fsys, opts, saved)
			require.NoError(t, err, "run %d step %d: recovery (G8)", run, step)
			assert.Empty(t, r.Wrong, "run %d step %d: recovery served wrong bytes (G1)", run, step)
			assert.Empty(t, r.Misses, "run %d step %d: saved entries lost (G2), load %s %v", run, step, r.Stats.Load, r.Stats.LoadErr)
		}
	}
	t.Logf("v3: %d histories, %d launches, %d restarts, %d recoveries checked against the last save", runs, launches, restarts, checked)
}
