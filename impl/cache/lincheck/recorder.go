package lincheck

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/anishathalye/porcupine"

	"github.com/xpwc/xpwc/impl/cache"
)

// Recorder collects a concurrent history. Timestamps come from one atomic
// counter, a logical clock: a call's timestamp is taken before the call and
// its return's after it, so real-time order is never inverted (porcupine
// treats intervals as closed; wall-clock readings from several cores would
// not be monotonic across them).
type Recorder struct {
	clock atomic.Int64

	mu  sync.Mutex
	ops []porcupine.Operation
	// done[i] reports that ops[i] returned.
	done []bool
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Pending is a call that has not returned yet.
type Pending struct {
	r   *Recorder
	idx int
}

// Call records the invocation of in by client and returns the handle to
// record its return with.
func (r *Recorder) Call(client int, in Input) Pending {
	in.Client = client
	t := r.clock.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Call: t})
	r.done = append(r.done, false)
	return Pending{r: r, idx: len(r.ops) - 1}
}

// Return records the operation's output.
func (p Pending) Return(out Output) {
	t := p.r.clock.Add(1)
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	p.r.ops[p.idx].Output = out
	p.r.ops[p.idx].Return = t
	p.r.done[p.idx] = true
}

// History returns the operations recorded so far. An operation that has not
// returned gets Return = math.MaxInt64 and an Unknown output, which the
// model accepts whatever the operation did: leaving it out would let its
// effects appear without a cause, and a missing return is otherwise read
// as an illegal history (porcupine issue 8).
func (r *Recorder) History() []porcupine.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]porcupine.Operation, len(r.ops))
	copy(out, r.ops)
	for i := range out {
		if !r.done[i] {
			out[i].Output = Output{Unknown: true}
			out[i].Return = math.MaxInt64
		}
	}
	return out
}

// HandleTable numbers handles: equal handles get equal numbers, distinct
// handles distinct ones, 0 is the invalid handle. cache.Handle is opaque,
// and the model compares numbers.
type HandleTable struct {
	mu sync.Mutex
	m  map[cache.Handle]uint64
}

// NewHandleTable returns an empty table.
func NewHandleTable() *HandleTable { return &HandleTable{m: map[cache.Handle]uint64{}} }

// Number returns h's number.
func (t *HandleTable) Number(h cache.Handle) uint64 {
	if !h.Valid() {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.m[h]
	if !ok {
		n = uint64(len(t.m) + 1)
		t.m[h] = n
	}
	return n
}
