package sim

import "github.com/xpwc/xpwc/spec"

// handleDestroy closes the process's instance; the process keeps running
// with the kernel and sources it started with.
func (w *world) handleDestroy(pr *proc) spec.Result {
	r := spec.Result{Failed: w.closeInstance(pr) != nil}
	pr.pending = [spec.MaxNames]Reservation{}
	pr.checked = [spec.MaxNames]bool{}
	pr.held = [spec.MaxNames]Handle{}
	return r
}

// closeInstance closes the process's instance and forgets it, keeping an
// implementation's failure to close (Instance.Fault) as the run's verdict.
func (w *world) closeInstance(pr *proc) error {
	err := pr.c.Close()
	if f := pr.c.Fault(); f != nil && w.fault == nil {
		w.fault = f
	}
	pr.c = nil
	return err
}
