package explore

import (
	"sync"
	"sync/atomic"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// Flags of a step kept in the liveness graph.
const (
	edgeQuiet     uint8 = 1 << iota // a step of the processes (model.Quiet)
	edgeConverged                   // a converged launch (model.ConvergedLaunch)
	edgeLaunch                      // a finalize (model.Launched)
	edgeLaunchB                     // … by the second process of the (canonical) state it leaves
	edgeSwapped                     // the state it enters was canonicalized by swapping the processes
)

// succ is one successor of an expanded state, as a worker computed it.
type succ struct {
	enc       model.Encoding // canonical encoding of the new state
	fp        uint64         // its fingerprint
	op        spec.Op
	stepViol  uint32         // invariants (bits in spec.Invariants order) the step breaks
	stateViol uint32         // … the new state breaks (counted on first sight only)
	covers    uint64         // covers (bits in expander.covers order) the step is this worker's first to reach
	ren       model.Renaming // the renaming that took the new state to its canonical form
	self      bool           // the step leads back to the state itself
	edge      uint8
}

// chunk is a run of states of one level, expanded by one worker and merged
// in order.
type chunk struct {
	encs    []model.Encoding
	succ    []succ
	first   []int    // index in succ of each state's first successor
	counts  []int    // successors of each state
	fps     []uint64 // each state's fingerprint (expander.stateFPs)
	covered uint64
	done    chan struct{}
}

const chunkStates = 256

// expander holds what expanding a state needs that does not change during a
// run.
type expander struct {
	d *model.Design
	b model.Bounds
	// canon is the canonical form states are identified by: dead fields
	// forgotten, then renamed (model.Bounds.Symmetries, less what Options
	// turn off); symmetric says the renamings exchange the processes,
	// which the liveness check follows.
	canon     model.Canon
	symmetric bool
	// stateFPs has each expanded state's own fingerprint computed too:
	// the fingerprint mode names the liveness graph's states by it.
	stateFPs bool
	alphabet []spec.Op
	covers   []model.Cover
	invs     []spec.InvariantID
	bit      map[spec.InvariantID]uint32
	// chunks are kept from level to level: their slices grow to a level's
	// widest states once, not once a level.
	chunks []*chunk
}

// chunkPool returns n chunks, made on first use.
func (x *expander) chunkPool(n int) []*chunk {
	for len(x.chunks) < n {
		x.chunks = append(x.chunks, &chunk{encs: make([]model.Encoding, 0, chunkStates), done: make(chan struct{}, 1)})
	}
	return x.chunks[:n]
}

func newExpander(d *model.Design, b model.Bounds, canon model.Canon) *expander {
	x := &expander{d: d, b: b, canon: canon, symmetric: canon.Group()&model.SwapProcs != 0, alphabet: model.Alphabet(b),
		covers: model.CoversFor(d), bit: map[spec.InvariantID]uint32{}}
	for i, inv := range spec.Invariants() {
		x.invs = append(x.invs, inv.ID)
		x.bit[inv.ID] = 1 << i
	}
	return x
}

// worker is one goroutine's scratch space.
type worker struct {
	x       *expander
	checker *model.Checker
	buf     []model.Outcome
	state   model.State // the state being expanded: a field, not a local that escapes per state
	viol    []spec.InvariantID
	covered uint64 // covers this worker has seen reached
}

func (x *expander) newWorker() *worker {
	return &worker{x: x, checker: model.NewChecker(x.b)}
}

func (w *worker) mask(ids []spec.InvariantID) uint32 {
	var m uint32
	for _, id := range ids {
		m |= w.x.bit[id]
	}
	return m
}

// expand computes every successor of the chunk's states.
func (w *worker) expand(c *chunk) {
	x := w.x
	c.succ, c.first, c.counts, c.fps, c.covered = c.succ[:0], c.first[:0], c.counts[:0], c.fps[:0], 0
	all := uint64(1)<<len(x.covers) - 1
	for k := range c.encs {
		w.state = c.encs[k].Decode()
		s := &w.state
		if x.stateFPs {
			c.fps = append(c.fps, c.encs[k].Fingerprint())
		}
		c.first = append(c.first, len(c.succ))
		for _, op := range x.alphabet {
			w.buf = model.StepAppend(w.buf[:0], x.d, x.b, s, op)
			for o := range w.buf {
				out := &w.buf[o]
				t := model.Transition{Prev: s, Out: out}
				c.succ = append(c.succ, succ{op: out.Op})
				sc := &c.succ[len(c.succ)-1]
				sc.stepViol = w.mask(w.checker.ViolatedByStep(w.viol[:0], t))
				if out.Next == *s {
					// A step back to s itself (about a quarter of them):
					// s is canonical and seen already.
					sc.self = true
				} else {
					sc.ren = x.canon.Encode(&out.Next, &sc.enc)
					sc.fp = sc.enc.Fingerprint()
					sc.stateViol = w.mask(w.checker.ViolatedByState(w.viol[:0], t))
				}
				sc.edge = edgeFlags(x.b, t, sc.ren&model.SwapProcs != 0)
				if w.covered != all {
					for i := range x.covers {
						if w.covered&(1<<i) == 0 && x.covers[i].Reached(t) {
							w.covered |= 1 << i
							sc.covers |= 1 << i
						}
					}
				}
			}
		}
		c.counts = append(c.counts, len(c.succ)-c.first[len(c.first)-1])
	}
	c.covered = w.covered
}

// edgeFlags are the liveness graph's flags of step t: 0 for a step of the
// environment, or from a state in which a process runs an outdated kernel
// or source (model.Current), which the graph leaves out.
func edgeFlags(b model.Bounds, t model.Transition, swapped bool) uint8 {
	if !model.Quiet(t.Out.Op) || !model.Current(b, t.Prev) {
		return 0
	}
	f := edgeQuiet
	if model.ConvergedLaunch(b, t) {
		f |= edgeConverged
	}
	if model.Launched(t) {
		f |= edgeLaunch
		if t.Out.Op.Proc == 1 {
			f |= edgeLaunchB
		}
	}
	if swapped {
		f |= edgeSwapped
	}
	return f
}

// expandLevel expands every state of level and hands each chunk to merge,
// in the level's order. With more than one worker, goroutines expand chunks
// ahead while merge runs; stopped, read after each merge, ends the level.
func (x *expander) expandLevel(level levelQueue, workers int, merge func(*chunk), stopped func() bool) {
	level.rewind()
	fill := func(c *chunk, left int) int {
		n := min(left, chunkStates)
		c.encs = c.encs[:n]
		for k := range n {
			level.next(&c.encs[k])
		}
		return n
	}
	if workers <= 1 {
		w := x.newWorker()
		c := x.chunkPool(1)[0]
		for left := level.count(); left > 0 && !stopped(); {
			left -= fill(c, left)
			w.expand(c)
			merge(c)
		}
		return
	}
	pool := make(chan *chunk, 2*workers+2)
	for _, c := range x.chunkPool(cap(pool)) {
		pool <- c
	}
	jobs := make(chan *chunk, cap(pool))
	order := make(chan *chunk, cap(pool))
	var halt atomic.Bool
	go func() {
		for left := level.count(); left > 0 && !halt.Load(); {
			c := <-pool
			left -= fill(c, left)
			order <- c
			jobs <- c
		}
		close(order)
		close(jobs)
	}()
	var wg sync.WaitGroup
	for range workers {
		w := x.newWorker()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				w.expand(c)
				c.done <- struct{}{}
			}
		}()
	}
	for c := range order {
		<-c.done
		if !halt.Load() {
			merge(c)
			if stopped() {
				halt.Store(true)
			}
		}
		pool <- c
	}
	wg.Wait()
}
