package conformance

import (
	"os"
	"testing"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// lockstepScenario is a cold launch, a warm launch, a kernel upgrade with
// its re-pack, a converged launch, an unload/reload and an invalidation:
// the common path of the lifecycle.
const lockstepScenario = `
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
lookup proc=A name=w1
reserve proc=A name=w1
insert proc=A name=w1
finalize proc=A
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
lookup proc=A name=w1
finalize proc=A
upgrade-kernel
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
lookup proc=A name=w1
reserve proc=A name=w1
insert proc=A name=w1
finalize proc=A
restart proc=A
init proc=A program=P2
lookup proc=A name=w1
finalize proc=A
unload proc=A program=P2
init proc=A program=P2
lookup proc=A name=w1
finalize proc=A
unload proc=A program=P2
invalidate proc=A name=w1
save proc=A
destroy proc=A
`

// BenchmarkLockstep measures conformance steps per second: each step runs
// the op on the model and on the real cache (OS filesystem under
// XPWC_CONFORMANCE_DIR, default the test's temporary directory) and compares
// the results and projections.
func BenchmarkLockstep(b *testing.B) {
	ops, err := spec.ParseTrace(lockstepScenario)
	if err != nil {
		b.Fatal(err)
	}
	d, err := harnessDesign()
	if err != nil {
		b.Fatal(err)
	}
	bnd := bounds()
	dir := os.Getenv("XPWC_CONFORMANCE_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	steps := 0
	for b.Loop() {
		w, err := newWorld(dir, worldConfig{backend: backendOS})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.run(&d, bnd, ops, nil); err != nil {
			b.Fatal(err)
		}
		steps += len(ops)
		w.close()
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
}

// TestLockstepScenario runs the common path deterministically, so that a
// divergence on it shows without depending on gopter's seed.
func TestLockstepScenario(t *testing.T) {
	ops, err := spec.ParseTrace(lockstepScenario)
	if err != nil {
		t.Fatal(err)
	}
	d, err := harnessDesign()
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range setups {
		w, err := newWorld(t.TempDir(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer w.close()
		var hits, writes int
		err = w.run(&d, bounds(), ops, func(_ int, out model.Outcome, o observation) {
			if o.hit {
				hits++
			}
			if out.Result.Wrote {
				writes++
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		// Warm launch (2), converged launch after the upgrade (1), reload (1).
		if hits != 4 || writes != 3 {
			t.Fatalf("%s: scenario exercised %d hits and %d commits, want 4 and 3", cfg, hits, writes)
		}
	}
}
