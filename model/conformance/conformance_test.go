package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// runnable reports whether the harness can perform op in model state s on
// cfg's backend: a crash inside a commit needs crashfs, the commit's
// holder, and for a process crash no other process with an instance
// (crashfs crashes one process only when it is alone; see world.crash).
func runnable(cfg worldConfig, s *model.State, op spec.Op, holder spec.Proc) bool {
	if op.Kind == spec.EvClobberOptions {
		return false // options belong to the module, not to the cache
	}
	if op.Kind == spec.EvCrash && op.Branch != spec.BranchIdle && op.Branch != spec.BranchMidSave {
		// The harness crashes between operations and inside a commit;
		// other points (a forged trailer) are the crash-point
		// enumeration's (faultinject/crashpoint), on bytes.
		return false
	}
	if !v2Demands(cfg, s, op) {
		return false
	}
	if op.Kind != spec.EvCrash || op.Branch != spec.BranchMidSave {
		return true
	}
	if cfg.backend != backendCrashFS || s.Disk.Lock != uint8(holder)+1 {
		return false
	}
	return op.Crash == spec.CrashPower || alone(s, op.Proc)
}

// v2Demands reports whether the harness demands the v2 design's outcome of
// op (docs/model.md, "v2 in conformance"). v2 stores no checksum, so a
// foreign write to an entry's bytes is served, and no source digest, so a
// source change is not seen once the process that packed the entry is
// gone: neither is generated. While the lock holder has appended space
// since its commit the file ends in that space, not in a footer: a process
// crash of the holder alone on crashfs leaves it so (the model's mid-save:
// no trailer parses, every entry is lost), any other end of the holder
// closes it, which ends the file with its last commit again (idle). A power
// loss then keeps or drops the appended space by which unsynced writes
// survive, an outcome the model does not predict: not generated.
func v2Demands(cfg worldConfig, s *model.State, op spec.Op) bool {
	switch op.Kind {
	case spec.EvForeign, spec.EvSourceChange:
		return false
	case spec.EvCrash:
		if op.Crash == spec.CrashPower && s.Disk.State == model.DiskCorrupt {
			// On v2 an unreadable file is one a writer's crash left
			// ending in its appended space (no foreign writes here); a
			// power loss keeps or drops that space by which unsynced
			// writes survive, and dropping it brings the old footer
			// back: neither design predicts which.
			return false
		}
		if !holderAppended(s) {
			// A holder writing a new file writes it under a temporary
			// name, which a crash leaves unused: the model's idle.
			return op.Branch != spec.BranchMidSave
		}
		if op.Crash == spec.CrashPower {
			return false
		}
		realCrash := cfg.backend == backendCrashFS && s.Disk.Lock == uint8(op.Proc)+1 && alone(s, op.Proc)
		return realCrash == (op.Branch == spec.BranchMidSave)
	}
	return true
}

// holderAppended reports whether the writer-lock holder has grown the
// live file since its commit: an entry packed or space reserved there. A
// holder that writes a new file (none yet, replacing an unreadable one, or
// after an empty index, which v2 expresses by removing the file) writes it
// under a temporary name, so the live file keeps its end.
func holderAppended(s *model.State) bool {
	if s.Disk.Lock == 0 || s.Disk.State != model.DiskValid {
		return false
	}
	pr := &s.Procs[s.Disk.Lock-1]
	if pr.Replacing || emptyIndex(s) {
		return false
	}
	if s.Disk.Volatile > 0 {
		// Space appended since the commit and left as garbage (an insert
		// that found its packing already there): the file still ends in
		// it until the holder commits again.
		return true
	}
	for n := range pr.Ents {
		if e := &pr.Ents[n]; e.Status == spec.EntryAppended || e.ReservedInFile() {
			return true
		}
	}
	return false
}

// alone reports whether p is the only process with an instance.
func alone(s *model.State, p spec.Proc) bool {
	for q := range s.Procs {
		if spec.Proc(q) != p && s.Procs[q].Phase != spec.PhaseNoInstance {
			return false
		}
	}
	return true
}

// v2Setups are the filesystems the v2 property covers.
var v2Setups = []worldConfig{{backend: backendOS}, {backend: backendCrashFS}}

// TestConformanceV2 runs the sequences sim's generator draws, restricted
// to what v2 is held to (runnable, v2Demands), on the model and the real
// cache in v2 (ExecuTorch's layout) in lockstep, held to ExecuTorch's
// trailer design (v2Design), on both filesystems. A failure is shrunk by
// sim's delta debugging and written as a trace, which
// XPWC_CONFORMANCE_V2_TRACE=FILE go test -run TestV2Lockstep replays.
// XPWC_CONFORMANCE_SEQS, _SEED and _LEN as for TestConformance.
func TestConformanceV2(t *testing.T) {
	d, err := v2Design()
	require.NoError(t, err)
	b := bounds()
	seed := envInt("XPWC_CONFORMANCE_SEED", int(time.Now().UnixNano()&0x7fffffff))
	seqs, steps := envInt("XPWC_CONFORMANCE_SEQS", 40), envInt("XPWC_CONFORMANCE_LEN", 40)
	for _, cfg := range v2Setups {
		t.Run(cfg.backend.String(), func(t *testing.T) {
			var n tally
			run := func(ops []spec.Op) error {
				w, err := newWorld(t.TempDir(), cfg)
				if err != nil {
					return err
				}
				defer w.close()
				w.tally = &n
				return w.run(&d, b, ops, nil)
			}
			gen := sim.GenOptions{Power: true, Allow: func(s *model.State, op spec.Op) bool { return runnable(cfg, s, op, lockHolder(s)) }}
			for i := range seqs {
				ops := sim.Generate(uint64(seed+i), steps, d, b, gen)
				n.seqs++
				err := run(ops)
				if err == nil {
					continue
				}
				small := sim.Shrink(ops, func(o []spec.Op) bool { return demanded(cfg, &d, b, o) },
					func(o []spec.Op) bool { return run(o) != nil })
				path := filepath.Join(os.TempDir(), fmt.Sprintf("conformance-v2-%s-seed%d.txt", cfg.backend, seed+i))
				text := fmt.Sprintf("# v2 on %s, seed %d, shrunk from %d to %d ops: %v\n%s", cfg.backend, seed+i, len(ops), len(small), run(small), spec.FormatTrace(small))
				require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
				t.Fatalf("%s\nreplay with: XPWC_CONFORMANCE_V2_TRACE=%s go test ./model/conformance -run TestV2Lockstep -v", text, path)
			}
			t.Logf("seeds %d..%d (XPWC_CONFORMANCE_SEED=%d replays them): %d sequences, %d steps, %d hits, %d commits, %d power losses, %d crashes inside a commit",
				seed, seed+seqs-1, seed, n.seqs, n.steps, n.hits, n.commits, n.powerLoss, n.midSave)
		})
	}
}

// demanded reports whether the model enables every op of ops in turn, with
// one outcome, and the harness is held to it on cfg: the shrinker's filter.
func demanded(cfg worldConfig, d *model.Design, b model.Bounds, ops []spec.Op) bool {
	s := model.Init(b)
	for _, op := range ops {
		outs := model.Step(d, b, s, op)
		if len(outs) != 1 || !runnable(cfg, &s, op, lockHolder(&s)) {
			return false
		}
		s = outs[0].Next
	}
	return true
}
