package sim

import (
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// handleInsert inserts the packing made into the reservation of name n.
func (w *world) handleInsert(pr *proc, op spec.Op) (spec.Result, error) {
	n := int(op.Name)
	if pr.pending[n].Buf == nil {
		return spec.Result{}, errNoInstance(op)
	}
	before := heapBytes(pr.c.Stats())
	// The runtime computes from the handle look_up_or_insert returns; an
	// Instance that does not pass it on leaves the compute to look the key
	// up for it (handler_compute.go).
	var h Handle
	var err error
	if hi, ok := pr.c.(handleInserter); ok {
		h, err = hi.InsertHandle(pr.key(n), pr.pending[n])
	} else {
		err = pr.c.Insert(pr.key(n), pr.pending[n])
	}
	w.toHeap = heapBytes(pr.c.Stats()) > before
	pr.pending[n] = Reservation{}
	pr.checked[n] = pr.checked[n] || err == nil
	if err == nil {
		pr.held[n] = h
	}
	return spec.Result{Failed: err != nil}, nil
}

// heapBytes is the bytes an instance keeps on the heap, for every reason.
func heapBytes(st cache.Stats) uint64 {
	var n uint64
	for _, v := range st.HeapBytes {
		n += v
	}
	return n
}
