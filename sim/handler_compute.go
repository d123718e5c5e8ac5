package sim

import (
	"errors"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// handleCompute is an inference after finalize reading name n's bytes
// through the handle the process holds (XNNPACK's offset_to_addr, then the
// operator's compute). Checked is the cache's verification counter moving
// at that read (under cache.VerifyOnCompute, the first read of an entry the
// instance did not pack). A read that fails its check is re-packed the way
// the runtime does (impl/runtime Backend.packedBytes), and the output's
// bytes are those of the re-pack: Place and Reason are where its
// reservation went, Wrote whether its save changed the file.
func (w *world) handleCompute(pr *proc, op spec.Op) (spec.Result, error) {
	n := int(op.Name)
	var r spec.Result
	before := pr.c.Stats().Verified
	h := pr.held[n]
	if h == 0 {
		// Inserted by this instance through an Instance that does not
		// return the handle: a look-up of the key returns it (nothing to
		// check: the instance packed it).
		var ok bool
		if h, ok = pr.c.LookUp(pr.key(n)); !ok {
			if w.inj != nil {
				// An injected fault made this side's launch miss or
				// fail where the model's hit: nothing to read (only
				// safety is compared then).
				w.note = "nothing to read: an injected fault"
				return spec.Result{}, nil
			}
			return spec.Result{}, errNoInstance(op)
		}
		pr.held[n] = h
	}
	b, err := computeRead(pr.c, h)
	r.Checked = pr.c.Stats().Verified > before
	if errors.Is(err, cache.ErrCorruptData) {
		b, err = w.repackAtCompute(pr, op, &r)
	}
	if err != nil {
		r.Failed = true
		w.note = err.Error()
		return r, nil
	}
	r.Bytes = classify(b, n, pr.want(n))
	pr.checked[n] = pr.checked[n] || r.Checked && r.Bytes == pr.want(n)
	return r, nil
}

// repackAtCompute is Backend.packedBytes after a failed check, outside any
// program's packing: look up again (the entry left the index), reserve
// (the writer lock, or the heap with a reason), pack, insert, save (a save
// that cannot commit now does not fail the inference, G8), and read the
// new entry.
func (w *world) repackAtCompute(pr *proc, op spec.Op, r *spec.Result) ([]byte, error) {
	n := int(op.Name)
	if h, hit := pr.c.LookUp(pr.key(n)); hit {
		pr.held[n] = h
		return pr.c.Bytes(h)
	}
	res := w.handleReserve(pr, n)
	r.Place, r.Reason = res.Place, res.Reason
	if res.Failed {
		return nil, errors.New("reserve failed")
	}
	ins, err := w.handleInsert(pr, spec.Op{Kind: spec.OpInsert, Proc: op.Proc, Name: op.Name})
	if err != nil {
		return nil, err
	}
	if ins.Failed {
		return nil, errors.New("insert failed")
	}
	h := pr.held[n]
	if h == 0 {
		var ok bool
		if h, ok = pr.c.LookUp(pr.key(n)); !ok {
			return nil, errors.New("the re-pack is not indexed")
		}
		pr.held[n] = h
	}
	r.Wrote = w.handleCommit(pr, spec.Op{Kind: spec.OpSave, Proc: op.Proc}).Wrote
	return computeRead(pr.c, h)
}

// computeRead is a compute's read of h: Compute when the instance tells
// it from other reads (Computer), else Bytes.
func computeRead(c Instance, h Handle) ([]byte, error) {
	if cp, ok := c.(Computer); ok {
		return cp.Compute(h)
	}
	return c.Bytes(h)
}
