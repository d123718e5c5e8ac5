package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// propertySetups are the runs TestConformance makes by default: the
// reference design in lockstep with the in-process cache on crashfs (with
// power loss) and on the OS filesystem, over one to three weight names.
var propertySetups = []struct {
	backend     sim.Backend
	names       int
	seqs, steps int
}{
	{sim.BackendCrashFS, 1, 60, 60},
	{sim.BackendCrashFS, 2, 40, 40},
	{sim.BackendCrashFS, 3, 30, 80},
	{sim.BackendOS, 2, 20, 40},
}

// TestConformance is the conformance property: for every seed, the op
// sequence gopter's commands draw from the ops the model enables agrees
// step for step between the model and the cache (sim.CheckSeed, as
// `simrun random` runs it). A failure is shrunk by gopter, then by sim's
// delta debugging, and written as a scenario file that `simrun replay`
// reproduces; the test
// prints its path and text. The sequences include foreign writes to the
// index and to entry data, so every initialization after one checks G7:
// the cache's load outcome is the model's (a recorded corrupt load, then a
// rebuild), never an error. XPWC_CONFORMANCE_SEQS, _SEED and _LEN override
// the number of sequences per set-up, the first seed and the length.
func TestConformance(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	seed := envInt("XPWC_CONFORMANCE_SEED", int(time.Now().UnixNano()&0x7fffffff))
	for _, s := range propertySetups {
		name := fmt.Sprintf("%s-names%d", s.backend, s.names)
		t.Run(name, func(t *testing.T) {
			b := model.DefaultBounds()
			b.Names = s.names
			seqs, steps := envInt("XPWC_CONFORMANCE_SEQS", s.seqs), envInt("XPWC_CONFORMANCE_LEN", s.steps)
			p := property{cfg: sim.Config{Backend: s.backend}, d: d, b: b, steps: steps,
				// The same seed runs from the command line too: both go
				// through sim.CheckSeed.
				found: fmt.Sprintf("XPWC_CONFORMANCE_SEQS=1 XPWC_CONFORMANCE_LEN=%d XPWC_CONFORMANCE_SEED=%%[1]d go test ./model/conformance -run 'TestConformance/%s$'"+
					" (or simrun random --seed %%[1]d --steps %d --runs 1 --names %d --backend %s)", steps, name, steps, s.names, s.backend)}
			p.run(t, seed, seqs)
		})
	}
}

// property is one set-up of the conformance property.
type property struct {
	cfg   sim.Config
	d     model.Design
	b     model.Bounds
	steps int
	found string // the command that reruns a seed, with %d for it
}

// failure is a seed that failed, with its shrunk scenario's file.
type failure struct {
	seed uint64
	path string
	sim.Checked
}

func (f *failure) String() string {
	return fmt.Sprintf("seed %d: %v\nshrunk from %d to %d ops; replay with: go run ./cmd/simrun replay -v %s\n%s",
		f.seed, f.Err, f.Ops, len(f.Shrunk), f.path, f.Scenario)
}

// run checks seqs seeds from seed and fails t at the first failure,
// whose scenario goes to the system's temporary directory, so that it
// outlives the test.
func (p property) run(t *testing.T, seed, seqs int) {
	clean, known, fail, err := p.check(uint64(seed), seqs, os.TempDir())
	require.NoError(t, err)
	if fail != nil {
		t.Fatal(fail)
	}
	t.Logf("seeds %d..%d (XPWC_CONFORMANCE_SEED=%d replays them), %d sequences of up to %d ops: %d agreed, stopped at known divergences %v",
		seed, seed+seqs-1, seed, seqs, p.steps, clean, known)
	// Most sequences must get through: a generator that always hits a
	// known divergence early would test nothing.
	require.Greater(t, clean, seqs/2)
}

// check runs seqs seeds from first and stops at the first failure, whose
// shrunk scenario it writes to dir. It returns how many sequences agreed
// and at which known divergences the others stopped.
func (p property) check(first uint64, seqs int, dir string) (clean int, known map[string]int, fail *failure, err error) {
	known = map[string]int{}
	for seed := first; seed < first+uint64(seqs); seed++ {
		c := sim.CheckSeed(p.cfg, p.d, p.b, seed, p.steps, fmt.Sprintf(p.found, seed))
		switch {
		case c.Failed():
			f := &failure{seed: seed, Checked: c,
				path: filepath.Join(dir, fmt.Sprintf("conformance-%s-seed%d.scenario", p.cfg.Backend, seed))}
			return clean, known, f, os.WriteFile(f.path, []byte(c.Scenario), 0o644)
		case c.Known != "":
			known[c.Known]++
		default:
			clean++
		}
	}
	return clean, known, nil, nil
}

// TestConformanceOnCompute is the property for the cache under
// cache.VerifyOnCompute, the runtime's default, two ways. Held to the
// reference (read-at-lookup): the look-up hands a handle out unchecked and
// the harness reads its bytes right after every hit, so the model's look-up
// covers look-up and read, and moving the check to the read changes
// nothing the model can observe (I2, I13, G3). Held to the design
// on-compute (compute): the look-up only hands a handle, and inferences
// after finalize (compute ops among the generator's, with foreign writes
// to entries' data) read it: corruption found there is re-packed outside
// any program's packing as impl/runtime does (writer lock, insert, save)
// and the output is held to the model's re-pack, its placement and its
// commit.
func TestConformanceOnCompute(t *testing.T) {
	seed := envInt("XPWC_CONFORMANCE_SEED", int(time.Now().UnixNano()&0x7fffffff))
	for _, m := range []struct{ mode, design string }{{"read-at-lookup", "reference"}, {"compute", "on-compute"}} {
		d, err := model.DesignByName(m.design)
		require.NoError(t, err)
		for _, s := range []struct{ names, seqs, steps int }{{1, 40, 60}, {2, 30, 60}} {
			name := fmt.Sprintf("%s-crashfs-names%d", m.mode, s.names)
			t.Run(name, func(t *testing.T) {
				b := model.DefaultBounds()
				b.Names = s.names
				seqs, steps := envInt("XPWC_CONFORMANCE_SEQS", s.seqs), envInt("XPWC_CONFORMANCE_LEN", s.steps)
				p := property{cfg: sim.Config{Backend: sim.BackendCrashFS, VerifyData: cache.VerifyOnCompute}, d: d, b: b, steps: steps,
					found: fmt.Sprintf("XPWC_CONFORMANCE_SEQS=1 XPWC_CONFORMANCE_LEN=%d XPWC_CONFORMANCE_SEED=%%[1]d go test ./model/conformance -run 'TestConformanceOnCompute/%s$'", steps, name)}
				p.run(t, seed, seqs)
			})
		}
	}
}

// TestConformanceV2 is the property for the cache writing v2 (ExecuTorch's
// layout), held to ExecuTorch's trailer design (sim.V2Design) on both
// filesystems: sim's generator draws only what v2 is held to
// (sim.V2Allow), and a failure is shrunk and written as a scenario that
// opens with `format v2`, which `simrun replay` reproduces.
// XPWC_CONFORMANCE_SEQS, _SEED and _LEN as for TestConformance.
func TestConformanceV2(t *testing.T) {
	d, err := sim.V2Design()
	require.NoError(t, err)
	b := model.DefaultBounds()
	b.Names = 2
	seed := envInt("XPWC_CONFORMANCE_SEED", int(time.Now().UnixNano()&0x7fffffff))
	seqs, steps := envInt("XPWC_CONFORMANCE_SEQS", 40), envInt("XPWC_CONFORMANCE_LEN", 40)
	for _, backend := range []sim.Backend{sim.BackendOS, sim.BackendCrashFS} {
		t.Run(string(backend), func(t *testing.T) {
			p := property{cfg: sim.Config{Backend: backend, Format: spec.FormatV2}, d: d, b: b, steps: steps,
				found: fmt.Sprintf("XPWC_CONFORMANCE_SEQS=1 XPWC_CONFORMANCE_LEN=%d XPWC_CONFORMANCE_SEED=%%[1]d go test ./model/conformance -run 'TestConformanceV2/%s$'"+
					" (or simrun random --seed %%[1]d --steps %d --runs 1 --names %d --format v2 --backend %s)", steps, backend, steps, b.Names, backend)}
			p.run(t, seed, seqs)
		})
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
