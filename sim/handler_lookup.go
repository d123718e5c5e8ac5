package sim

import (
	"errors"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// handleLookUp looks the process's key for name n up and reads the bytes
// of a hit, as a compute does next, and classifies them by the packing they
// hold (G1). Checked is observed as the cache's verification counter
// moving, at the look-up (on first use) or at the read (on compute): the
// model's look-up is both. A read that fails its check under
// cache.VerifyOnCompute is the model's miss with the corruption caught: the
// runtime re-packs then, as after a look-up that missed (I13).
//
// Under the design on-compute the look-up only hands a handle: the harness
// keeps it for the compute (handler_compute.go), which reads and checks.
func (w *world) handleLookUp(pr *proc, n int) spec.Result {
	var r spec.Result
	before := pr.c.Stats().Verified
	h, hit := pr.c.LookUp(pr.key(n))
	if hit {
		pr.held[n] = h
	}
	if w.handleOnly {
		r.Hit, r.Checked = hit, pr.c.Stats().Verified > before
		return r
	}
	var b []byte
	var err error
	if hit {
		b, err = pr.c.Bytes(h)
		if errors.Is(err, cache.ErrCorruptData) {
			hit, err = false, nil
		}
	}
	r.Checked = pr.c.Stats().Verified > before
	if !hit {
		pr.checked[n] = false // what a later hit hands out is new to it
		return r
	}
	if err != nil {
		r.Failed = true
		return r
	}
	r.Hit = true
	r.Bytes = classify(b, n, pr.want(n))
	pr.checked[n] = pr.checked[n] || r.Checked && r.Bytes == pr.want(n)
	return r
}
