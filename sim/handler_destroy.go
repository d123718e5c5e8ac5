package sim

import "github.com/xpwc/xpwc/spec"

// handleDestroy closes the process's instance; the process keeps running
// with the kernel and sources it started with.
func (w *world) handleDestroy(pr *proc) spec.Result {
	r := spec.Result{Failed: pr.c.Close() != nil}
	pr.c = nil
	pr.pending = [spec.MaxNames][]byte{}
	pr.checked = [spec.MaxNames]bool{}
	return r
}
