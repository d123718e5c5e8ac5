package sim

import "github.com/xpwc/xpwc/spec"

// handleLookUp looks the process's key for name n up and classifies the
// bytes of a hit by the packing they hold (G1). Checked is observed as the
// cache's verification counter moving.
func (w *world) handleLookUp(pr *proc, n int) spec.Result {
	var r spec.Result
	before := pr.c.Stats().Verified
	h, hit := pr.c.LookUp(pr.key(n))
	r.Checked = pr.c.Stats().Verified > before
	if !hit {
		pr.checked[n] = false // what a later hit hands out is new to it
		return r
	}
	b, err := pr.c.Bytes(h)
	if err != nil {
		r.Failed = true
		return r
	}
	r.Hit = true
	r.Bytes = classify(b, n, pr.want(n))
	pr.checked[n] = pr.checked[n] || r.Checked && r.Bytes == pr.want(n)
	return r
}
