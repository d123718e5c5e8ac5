package sim

import "github.com/xpwc/xpwc/spec"

// handleCrash kills one process or, on power loss, all of them (see kill
// and powerLoss for what each backend can do).
func (w *world) handleCrash(op spec.Op, holder int) error {
	mid := op.Branch == spec.BranchMidSave
	if op.Crash == spec.CrashPower {
		return w.powerLoss(mid, holder)
	}
	w.kill(int(op.Proc), mid)
	return nil
}

// handleRestart ends process p cleanly and starts a new one running the
// installed kernel and sources.
func (w *world) handleRestart(p int) {
	if w.procs[p].c != nil {
		_ = w.closeInstance(&w.procs[p])
	}
	w.start(p)
}
