package explore

import (
	"context"
	"math/bits"
	"runtime/pprof"
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

// succ is what the merge reads of every successor of an expanded state,
// on another core than the worker that wrote it: 3 bytes. What it needs
// only for a new state (born, next) or for a step that breaks an invariant
// or reaches a cover (rare) is kept apart, as are the fingerprints, which
// the merge reads only without parts or for the fingerprint mode's graph
// (chunk.fp).
type succ struct {
	edge  uint8
	part  uint8 // the part of the visited set that holds the successor (partOf)
	flags uint8 // succSelf, succRare
}

const (
	succSelf uint8 = 1 << iota // the step leads back to the state itself
	succRare                   // the step has an entry in chunk.rare
)

// born is what the merge needs of a successor that is not a self-loop
// when it is new: the op that reached it and the renaming that took it
// to its canonical form.
type born struct {
	op  spec.Op
	ren model.Renaming
}

// rare is a step that breaks an invariant or reaches a cover.
type rare struct {
	op        spec.Op
	stepViol  uint32 // invariants (bits in spec.Invariants order) the step breaks
	stateViol uint32 // … the new state breaks (counted on first sight only)
	covers    uint64 // covers (bits in expander.covers order) the step is this worker's first to reach
}

// chunk is a run of states of one level, expanded by one worker and merged
// in order.
type chunk struct {
	encs []model.Encoding
	succ []succ
	// next, born and (if kept) fp are of the successors that are not
	// self-loops, in order: their canonical encodings, what a new one
	// needs, their fingerprints (kept without parts, or with stateFPs).
	next    []model.Encoding
	born    []born
	fp      []uint64
	rare    []rare   // the steps flagged succRare, in order
	first   []int    // index in succ of each state's first successor
	counts  []int    // successors of each state
	fps     []uint64 // each state's fingerprint (expander.stateFPs)
	covered uint64
	// With the visited set split into parts (expander.parts > 0): the
	// fingerprints of the successors that are not self-loops, by part, in
	// the chunk's order (pfp), and what each part's insert found for them
	// (pres: the state's number within its part, newBit if the insert
	// added it). ready is closed when the chunk is expanded.
	pfp   [][]uint64
	pres  [][]uint32
	ready chan struct{}
}

// chunkStates is a chunk's states. 64 (a pool within one core's L2) was
// tried: on an idle machine two workers then took 7 % longer than at 256
// (more hand-offs), while one worker gained nothing.
const chunkStates = 256

// expander holds what expanding a state needs that does not change during a
// run.
type expander struct {
	d *model.Design
	b model.Bounds
	// canon is the canonical form states are identified by: dead fields
	// forgotten, then renamed (model.Bounds.Symmetries, less what Options
	// turn off).
	canon model.Canon
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
	// parts is how many parts the visited set is split into (0: it is not,
	// and the merge inserts every fingerprint; else 2 or more).
	parts int
}

// chunkPool returns n chunks, made on first use.
func (x *expander) chunkPool(n int) []*chunk {
	for len(x.chunks) < n {
		x.chunks = append(x.chunks, &chunk{encs: make([]model.Encoding, 0, chunkStates)})
	}
	return x.chunks[:n]
}

func newExpander(d *model.Design, b model.Bounds, canon model.Canon) *expander {
	x := &expander{d: d, b: b, canon: canon, alphabet: model.Alphabet(b),
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
	c.succ, c.next, c.born, c.fp, c.rare = c.succ[:0], c.next[:0], c.born[:0], c.fp[:0], c.rare[:0]
	c.first, c.counts, c.fps, c.covered = c.first[:0], c.counts[:0], c.fps[:0], 0
	if len(c.pfp) != x.parts {
		c.pfp, c.pres = make([][]uint64, x.parts), make([][]uint32, x.parts)
	}
	for p := range c.pfp {
		c.pfp[p] = c.pfp[p][:0]
	}
	keepFP := x.parts == 0 || x.stateFPs
	all := uint64(1)<<len(x.covers) - 1
	for k := range c.encs {
		w.state = c.encs[k].Decode()
		s := &w.state
		current := model.Current(x.b, s) // edgeFlags' test of the state, once for its steps
		if x.stateFPs {
			c.fps = append(c.fps, c.encs[k].Fingerprint())
		}
		c.first = append(c.first, len(c.succ))
		for _, op := range x.alphabet {
			w.buf = model.StepAppend(w.buf[:0], x.d, x.b, s, op)
			for o := range w.buf {
				out := &w.buf[o]
				t := model.Transition{Prev: s, Out: out}
				var sc succ
				var r rare
				r.stepViol = w.mask(w.checker.ViolatedByStep(w.viol[:0], t))
				var ren model.Renaming
				if out.Next == *s {
					// A step back to s itself (about a quarter of them):
					// s is canonical and seen already.
					sc.flags = succSelf
				} else {
					c.next = append(c.next, model.Encoding{})
					enc := &c.next[len(c.next)-1]
					ren = x.canon.Encode(&out.Next, enc)
					c.born = append(c.born, born{op: out.Op, ren: ren})
					fp := enc.Fingerprint()
					if keepFP {
						c.fp = append(c.fp, fp)
					}
					if x.parts > 0 {
						p := partOf(fp, x.parts)
						sc.part = uint8(p)
						c.pfp[p] = append(c.pfp[p], fp)
					}
					r.stateViol = w.mask(w.checker.ViolatedByState(w.viol[:0], t))
				}
				if current && model.Quiet(out.Op) {
					sc.edge = quietEdgeFlags(x.b, t, ren&model.SwapProcs != 0)
				}
				for left := all &^ w.covered; left != 0; left &= left - 1 {
					if i := bits.TrailingZeros64(left); x.covers[i].Reached(t) {
						w.covered |= 1 << i
						r.covers |= 1 << i
					}
				}
				if r.stepViol|r.stateViol != 0 || r.covers != 0 {
					sc.flags |= succRare
					r.op = out.Op
					c.rare = append(c.rare, r)
				}
				c.succ = append(c.succ, sc)
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
	return quietEdgeFlags(b, t, swapped)
}

// quietEdgeFlags is edgeFlags of a quiet step from a current state.
func quietEdgeFlags(b model.Bounds, t model.Transition, swapped bool) uint8 {
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
// in the level's order, on workers (1 or more) goroutines, this one among
// them. With more than one, goroutines expand chunks ahead while another
// merges; stopped, read after each merge, ends the level.
// With the visited set in parts (x.parts > 0), insert(p, c) runs for each
// part just before c's merge, by the merging worker: a part sees its
// fingerprints in the order one goroutine would insert them, so each state
// is new at the same successor as with one worker.
func (x *expander) expandLevel(level levelQueue, workers int, insert func(p int, c *chunk), merge func(*chunk), stopped func() bool) {
	level.rewind()
	fill := func(c *chunk, left int) int {
		n := min(left, chunkSize(left, workers))
		c.encs = c.encs[:n]
		for k := range n {
			level.next(&c.encs[k])
		}
		return n
	}
	if workers == 1 {
		w := x.newWorker()
		c := x.chunkPool(1)[0]
		for left := level.count(); left > 0 && !stopped(); {
			left -= fill(c, left)
			pprof.SetGoroutineLabels(roleExpand)
			w.expand(c)
			pprof.SetGoroutineLabels(roleMerge)
			merge(c)
		}
		pprof.SetGoroutineLabels(roleOther)
		return
	}
	parts := x.parts // 0, or two and more
	// No goroutine only merges: a worker that has expanded a chunk merges
	// every expanded chunk from the next unmerged one on (the parts'
	// inserts first), in the level's order, unless another worker is
	// merging. Each such worker adds one to calls; the one that raises it
	// from 0 merges, the others go on expanding, and the merging worker
	// looks again until no call came since its look began, so a chunk
	// expanded while it merged is never left waiting for a merge (a mutex
	// taken with TryLock left a window between its last look and its
	// unlock). A merging goroutine of its own sat runnable while both
	// cores expanded, and each hand-off to it and back cost a wake-up.
	// The merging worker hands out the chunks, round the pool in the
	// level's order (chunk i of the level is pool[i%len(pool)]): each
	// chunk again, refilled, as soon as it is merged. At most the pool is
	// out, so no send below waits. Any worker takes any chunk: keeping
	// each chunk with one worker measured no faster, and pinning the
	// workers' threads to CPUs slower.
	pool := x.chunkPool(2*workers + 2)
	// A worker takes the next chunk in order when it runs, not when it
	// starts waiting: jobs carries a token a chunk and queue the chunks.
	// Sent to a waiting worker, a chunk was that worker's even while it
	// was not running, and on one core the merging worker then expanded
	// the rest of the pool and could merge none of it.
	jobs := make(chan struct{}, len(pool))
	var (
		qmu    sync.Mutex
		queue  = make([]*chunk, len(pool))
		qh, qt int // queue's next to take, next to fill
	)
	left, out := level.count(), 0 // states not yet handed out; chunks handed out
	handOut := func() {
		c := pool[out%len(pool)]
		out++
		left -= fill(c, left)
		c.ready = make(chan struct{})
		qmu.Lock()
		queue[qt%len(queue)] = c
		qt++
		qmu.Unlock()
		jobs <- struct{}{}
	}
	pprof.SetGoroutineLabels(roleMerge) // reading the level is the merge's work with one worker
	defer pprof.SetGoroutineLabels(roleOther)
	for out < len(pool) && left > 0 {
		handOut()
	}
	if out == 0 {
		return // an empty level: no merge would close jobs
	}
	var (
		calls  atomic.Int64 // mergeAhead's calls since no worker merged: the one that made it 1 merges
		head   int          // the next chunk to merge; head, halt, closed and handOut's out and left are the merging worker's
		halt   bool         // stopped: the chunks still out are expanded and dropped
		closed bool
	)
	expanded := func(c *chunk) bool { return closedChan(c.ready) }
	// mergeAhead merges every expanded chunk from head on, in order,
	// unless another worker is merging: that one looks again.
	mergeAhead := func() {
		if calls.Add(1) > 1 {
			return
		}
		// n is calls as the look starts: the look answers them all, and
		// the worker stops merging only if no call came after.
		for n := int64(1); ; n = calls.Load() {
			pprof.SetGoroutineLabels(roleMerge)
			for ; head < out && expanded(pool[head%len(pool)]); head++ {
				c := pool[head%len(pool)]
				if halt {
					continue
				}
				pprof.SetGoroutineLabels(roleInsert)
				for p := range parts {
					insert(p, c)
				}
				pprof.SetGoroutineLabels(roleMerge)
				merge(c)
				halt = stopped()
				if left > 0 && !halt {
					handOut() // c again
				}
			}
			if head == out && !closed {
				closed = true
				close(jobs)
			}
			if calls.CompareAndSwap(n, 0) {
				pprof.SetGoroutineLabels(roleExpand)
				return
			}
		}
	}
	var wg sync.WaitGroup
	work := func() {
		defer wg.Done()
		w := x.newWorker()
		pprof.SetGoroutineLabels(roleExpand)
		for range jobs {
			qmu.Lock()
			c := queue[qh%len(queue)]
			qh++
			qmu.Unlock()
			w.expand(c)
			close(c.ready)
			mergeAhead()
		}
	}
	wg.Add(workers)
	for range workers - 1 {
		go work()
	}
	work() // this goroutine is a worker too
	wg.Wait()
}

// closedChan is whether ch is closed (a chunk's ready: expanded).
func closedChan(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// chunkSize is how many states of a level the next chunk takes when left
// are still to be handed out. With more than one worker the last chunks
// of a level are cut finer (guided self-scheduling: about a quarter of
// each worker's share of what is left), so that the workers finish the
// level together instead of one expanding a whole chunk while the others
// wait for the next level; a level of a few chunks is cut finer too, so
// that every worker has some of it.
func chunkSize(left, workers int) int {
	if workers <= 1 {
		return chunkStates
	}
	return max(chunkStates/8, min(chunkStates, left/(4*workers)))
}

// The roles of the search's goroutines, as CPU profiles label them
// ("explore": expand, insert, merge; other for the rest of a run, the
// liveness check included): what runs on every core and what on one.
var (
	roleExpand = pprof.WithLabels(context.Background(), pprof.Labels("explore", "expand"))
	roleInsert = pprof.WithLabels(context.Background(), pprof.Labels("explore", "insert"))
	roleMerge  = pprof.WithLabels(context.Background(), pprof.Labels("explore", "merge"))
	roleOther  = pprof.WithLabels(context.Background(), pprof.Labels("explore", "other"))
)

// partOf is the part of the visited set that holds fp: its low bits, which
// neither fpSet nor fpTable uses to place it (0 and 1 are one fingerprint
// there, so here too).
func partOf(fp uint64, parts int) int {
	if fp == 0 {
		fp = 1
	}
	return int(uint16(fp)) % parts
}
