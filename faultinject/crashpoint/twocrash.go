package crashpoint

import (
	"fmt"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// TwoCrashes enumerates a crash followed by more work and a second crash:
// for every crash point of w, the process crashes; a new process launches
// over next (typically an upgrade, which appends to whatever file the crash
// left) and returns; then the power fails. If the new launch committed
// everything it packed, the power loss must keep it (G2): durability
// promised by one process must not depend on what the process before it
// left unsynced. Recovery checks G1 and G3 as in Enumerate.
func TwoCrashes(cfg Config, w Workload, next []spec.Key) (Report, error) {
	rep := Report{Workload: w.Name + "+crash+" + "launch+power", Format: cfg.Format}
	opts := cache.Options{Path: Path, Format: cfg.Format, CompactGarbageRatio: cfg.CompactGarbageRatio}
	fsys, base, err := prepare(cfg, w, opts)
	if err != nil {
		return rep, err
	}
	if err := w.Run(Env{FS: fsys, Opts: opts, Saved: func([]spec.Key) {}}); err != nil {
		return rep, fmt.Errorf("reference run of %s: %w", w.Name, err)
	}
	log := fsys.Log()[base:]
	rep.Ops = len(log)
	for n := 0; n <= rep.Ops; n++ {
		rep.CrashPoints++
		last := lastOp(log, n)
		fsys, _, err := prepare(cfg, w, opts)
		if err != nil {
			return rep, err
		}
		fsys.SetCrashAfter(base + n)
		_ = runCrashing(w, Env{FS: fsys, Opts: opts, Saved: func([]spec.Key) {}})
		after := fsys.ProcessCrash()
		r, err := Launch(after, opts, next)
		if err != nil {
			rep.Violations = append(rep.Violations, Violation{Guarantee: "G8", Point: n, LastOp: last, Crash: "process", Detail: err.Error()})
			continue
		}
		var mustHit []spec.Key
		if r.Committed && len(r.Stats.HeapBytes) == 0 && r.Stats.FallbackErr == nil {
			mustHit = next
		}
		if cfg.exhaustive(after) {
			rep.Exhaustive++
		}
		i := 0
		for state := range after.PowerLossOutcomes(cfg.Outcomes, cfg.Seed+uint64(n)) {
			rep.States++
			for _, v := range recoverAndCheck(state, opts, next, mustHit, Pack) {
				v.Point, v.LastOp, v.Crash = n, last, fmt.Sprintf("process, launch, power#%d", i)
				rep.Violations = append(rep.Violations, v)
			}
			i++
		}
	}
	return rep, nil
}
