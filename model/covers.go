package model

import "github.com/xpwc/xpwc/spec"

// Cover is a reachability goal: something the reference design must be able
// to do within the default bounds. Invariants alone pass vacuously in a model
// that never commits or never hits; covers make that fail instead.
type Cover struct {
	Name        string
	Description string
	Reached     func(t Transition) bool
}

// atCompute reports whether only a design that checks data at the compute
// (Design.CheckAtCompute) can reach the cover named name.
func atCompute(name string) bool { return name == "repack-at-compute" }

// CoverReinitTruncates is the cover of ExecuTorch's heap fall-back re-init
// (Design.ReinitWithoutLoad, docs/bugs.md section 20): a reservation
// truncates in place a file holding another process's commit. Its
// invariant (I3) has a shorter trace in that design, so the explorer
// reports the bug by this cover, which only such a design can reach.
const CoverReinitTruncates = "reinit-truncates-commit"

// CoversFor returns the covers design d must reach, in Covers' order.
func CoversFor(d *Design) []Cover {
	var out []Cover
	for _, c := range Covers() {
		if (!atCompute(c.Name) || d.CheckAtCompute) && (c.Name != CoverReinitTruncates || d.ReinitWithoutLoad) {
			out = append(out, c)
		}
	}
	return out
}

func onEvent(e Events) func(Transition) bool {
	return func(t Transition) bool { return t.Out.Events&e != 0 }
}

// Covers returns the reachability goals in a fixed order.
func Covers() []Cover {
	return []Cover{
		{"commit", "an index is committed", onEvent(EvtCommit)},
		{"warm-hit", "a look-up hits an entry loaded from the file", onEvent(EvtWarmHit)},
		{"converged-launch", "a launch owed convergence hits everything and finishes (G3)", onEvent(EvtConverged)},
		{"warm-launch-writes-nothing", "a launch that hit everything finalizes without writing (G4)", func(t Transition) bool {
			return t.Out.Events&EvtConverged != 0 && !t.Out.Result.Wrote
		}},
		{"refresh", "an init takes in another process's commit", onEvent(EvtRefresh)},
		{"compaction", "a commit rewrites the file to drop garbage (G4)", onEvent(EvtCompact)},
		{"replace-unreadable", "a commit replaces an unreadable file by rename (G7)", onEvent(EvtReplace)},
		{"load-corrupt", "a load finds an unreadable index (G7)", onEvent(EvtLoadCorrupt)},
		{"lock-busy-fallback", "a reservation falls back to the heap on a busy lock (G8)", onEvent(EvtLockBusy)},
		{"corrupt-caught", "a data check rejects corrupt bytes (G1)", onEvent(EvtCorruptCaught)},
		{"stale-miss", "a look-up misses a packing of another kernel or source (G1)", onEvent(EvtStaleMiss)},
		{"crash-mid-save", "a crash interrupts a commit (G2)", onEvent(EvtMidSave)},
		{"invalidation-committed", "an invalidation is committed", onEvent(EvtInvalidated)},
		{"idle-save-writes-nothing", "a save with nothing new writes nothing (G4)", func(t Transition) bool {
			op := t.Out.Op
			return op.Kind == spec.OpSave && !t.Out.Result.Wrote && t.Prev.Disk.State == DiskValid
		}},
		{"repack-at-compute", "a compute after finalize finds corrupt bytes, re-packs them into the file and commits before the output (I13, on-compute)", func(t Transition) bool {
			return t.Out.Events&EvtComputeRepack != 0 && t.Out.Result.Place == spec.PlaceFile && t.Out.Result.Wrote
		}},
		{CoverReinitTruncates, "a reservation after an init that took the lock without loading truncates the file in place over another process's commit (the heap fall-back re-init, docs/bugs.md section 20)", func(t Transition) bool {
			return t.Out.Op.Kind == spec.OpReserve && t.Out.Events&EvtTruncate != 0 && t.Prev.Disk.State == DiskValid && t.Prev.GhostValid
		}},
		{"power-loss", "power loss kills every process", func(t Transition) bool {
			return t.Out.Op.Kind == spec.EvCrash && t.Out.Op.Crash == spec.CrashPower && t.Prev.Procs[0].Phase != spec.PhaseNoInstance
		}},
	}
}
