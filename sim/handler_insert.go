package sim

import "github.com/xpwc/xpwc/spec"

// handleInsert inserts the packing made into the reservation of name n.
func (w *world) handleInsert(pr *proc, op spec.Op) (spec.Result, error) {
	n := int(op.Name)
	if pr.pending[n].Buf == nil {
		return spec.Result{}, errNoInstance(op)
	}
	err := pr.c.Insert(pr.key(n), pr.pending[n])
	pr.pending[n] = Reservation{}
	pr.checked[n] = pr.checked[n] || err == nil
	return spec.Result{Failed: err != nil}, nil
}
