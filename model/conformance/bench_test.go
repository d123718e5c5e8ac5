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
		w, err := newWorld(dir)
		if err != nil {
			b.Fatal(err)
		}
		s := model.Init(bnd)
		for _, op := range ops {
			outs := model.Step(&d, bnd, s, op)
			if len(outs) != 1 {
				b.Fatalf("%s: %d outcomes", op, len(outs))
			}
			if diffs := compare(bnd, outs[0], w.apply(op)); len(diffs) > 0 {
				b.Fatalf("%s: %v", op, diffs)
			}
			s = outs[0].Next
			steps++
		}
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
	bnd := bounds()
	w, err := newWorld(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	s := model.Init(bnd)
	var hits, writes int
	for _, op := range ops {
		outs := model.Step(&d, bnd, s, op)
		if len(outs) != 1 {
			t.Fatalf("%s: %d outcomes", op, len(outs))
		}
		o := w.apply(op)
		if diffs := compare(bnd, outs[0], o); len(diffs) > 0 {
			t.Fatalf("%s: %v", op, diffs)
		}
		if o.hit {
			hits++
		}
		if outs[0].Result.Wrote {
			writes++
		}
		s = outs[0].Next
	}
	// Warm launch (2), converged launch after the upgrade (1), reload (1).
	if hits != 4 || writes != 3 {
		t.Fatalf("scenario exercised %d hits and %d commits, want 4 and 3", hits, writes)
	}
}
