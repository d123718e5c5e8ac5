// Package explore is the bounded exhaustive explorer of the lifecycle model:
// breadth-first over every op sequence of package model within Bounds, one
// visit per distinct state, every invariant checked on every transition, the
// shortest counterexample per invariant kept as a replayable trace.
package explore

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"time"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// Options configures a run. The zero Progress writes no progress.
type Options struct {
	Bounds model.Bounds
	// Progress receives a line per ProgressEvery (default 1s) and a final
	// line; nil for none.
	Progress      io.Writer
	ProgressEvery time.Duration
	// MaxStates stops the search early (0: no limit); Result.Complete
	// then reports false.
	MaxStates int
	// StopWhenFound ends the run after the level in which every listed
	// invariant has been violated: enough to show a variant's known bugs
	// with their shortest traces without exploring the rest.
	StopWhenFound []spec.InvariantID
	// NoSymmetry visits a state and its mirror image (A and B swapped)
	// separately. By default one of each pair is visited, which halves the
	// work; traces are renamed back, so they replay as printed. It also
	// turns off the exchange of names.
	NoSymmetry bool
	// NoNameSymmetry visits a state and the state with the names w0 and w1
	// exchanged separately. By default, when the bounds' programs allow it
	// (model.Bounds.Symmetries), one of each pair is visited.
	NoNameSymmetry bool
	// KeepDeadFields keeps apart states that differ only in fields no
	// future step reads (model.Canon); by default they are one state.
	KeepDeadFields bool
	// Stop, when closed, ends the run at once (an interrupt): the Result
	// holds what was found so far, with Interrupted set.
	Stop <-chan struct{}
	// MaxHeapBytes stops the search when the Go heap grows past it (0: no
	// limit), read every few thousand states; Result.OutOfMemory then
	// reports it. The state set is what grows.
	MaxHeapBytes uint64
	// heapBytes reads the heap MaxHeapBytes is compared with (nil: the
	// runtime's live heap objects); tests give a fixed figure.
	heapBytes func() uint64
	// Workers is how many goroutines expand states (0 or 1: one). Every
	// count visits the same states and finds the same traces: workers
	// compute successors; with more than one, the visited set is split
	// into as many parts by fingerprint; one worker at a time inserts the
	// expanded chunks, in the level's order, into the parts and merges the
	// rest (numbers, links, the next level).
	Workers int
	// Liveness keeps the quiet steps between states and, when the run
	// exhausts the state space, checks convergence over the whole graph
	// (Result.Liveness).
	Liveness bool
	// Fingerprints keeps in memory only the visited states' fingerprints
	// (fpTable, 10 to 12.5 bytes a state), as TLC does: the levels of the
	// search, the parent links and the liveness graph's steps go to
	// files made by TempFiles, traces are rebuilt from the links, and the
	// liveness graph is read back and numbered after the search. The same
	// states, traces and verdicts as without it.
	Fingerprints bool
	// TempFiles makes the fingerprint mode's files (required with it).
	TempFiles TempFiles
}

// Violation is the shortest trace found that breaks one invariant.
type Violation struct {
	Invariant spec.InvariantID
	Trace     []spec.Op
}

// Reach is the shortest trace found to one cover.
type Reach struct {
	Cover string
	Trace []spec.Op
}

// Result is what a run found.
type Result struct {
	Design      string
	Bounds      model.Bounds
	States      int     // distinct states visited
	Transitions int     // outcomes generated (including into known states)
	Depth       int     // deepest level expanded
	Seconds     float64 // wall time of the search
	// LivenessSeconds is the wall time of the liveness pass that follows
	// an exhausted search.
	LivenessSeconds float64
	// Exhausted is true when no new state appeared before the depth bound
	// (the bounded state space was covered completely).
	Exhausted bool
	// Truncated is true when MaxStates stopped the run, OutOfMemory when
	// MaxHeapBytes did, Interrupted when Stop did.
	Truncated, OutOfMemory, Interrupted bool
	// Stopped is true when StopWhenFound ended the run early.
	Stopped bool
	// Violations holds one entry per invariant broken, in the order of
	// spec.Invariants, each with its shortest trace.
	Violations []Violation
	// Covered lists the model.Covers reached, in their order; Reached
	// holds each with the shortest trace found to it.
	Covered []string
	Reached []Reach
	// Liveness is the convergence check over the explored graph; Checked
	// is false unless Options.Liveness was set and the run exhausted the
	// state space.
	Liveness Liveness
	// Workers is the number of goroutines that expanded states.
	Workers int
	// VisitedBytes is the memory the visited set held at the end of the
	// search (fingerprints, and state numbers when kept in memory).
	VisitedBytes uint64
}

// StatesPerSecond is the exploration rate.
func (r Result) StatesPerSecond() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.States) / r.Seconds
}

// ReachedCover reports whether the cover named name was reached, with its
// trace.
func (r Result) ReachedCover(name string) (Reach, bool) {
	for _, c := range r.Reached {
		if c.Cover == name {
			return c, true
		}
	}
	return Reach{}, false
}

// Violated reports whether inv is among the violations.
func (r Result) Violated(inv spec.InvariantID) (Violation, bool) {
	for _, v := range r.Violations {
		if v.Invariant == inv {
			return v, true
		}
	}
	return Violation{}, false
}

// Run explores design d within opts.Bounds. Bounds.Depth 0 explores
// without a depth bound, to the end of the state space.
func Run(d model.Design, opts Options) (Result, error) {
	r, _, err := run(d, opts)
	return r, err
}

// searched is what a run keeps of the graph it explored (nil in the
// fingerprint mode, which keeps it on disk).
type searched struct {
	g     *graph
	links *links
	seen  stateIDs
}

// visitedSet is the set of visited states by fingerprint: fpSet, which can
// keep each state's number beside it, or fpTable, which keeps nothing but
// the fingerprints.
type visitedSet interface {
	addID(fp uint64, id uint32) (uint32, bool)
}

func run(d model.Design, opts Options) (Result, searched, error) {
	b := opts.Bounds
	if err := b.Validate(); err != nil {
		return Result{}, searched{}, err
	}
	every := opts.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	workers := max(opts.Workers, 1)
	// CPU profiles tell the search's roles apart (expandLevel); the
	// labels go when the run does.
	pprof.SetGoroutineLabels(roleOther)
	defer pprof.SetGoroutineLabels(context.Background())
	start := time.Now()
	tick := newTicker(opts.Progress, d.Name, every, start)

	x := newExpander(&d, b, model.NewCanon(&d, b, opts.symmetries(), opts.KeepDeadFields))
	covers := x.covers
	var covered uint64
	found := map[spec.InvariantID]Violation{}
	reached := map[int][]spec.Op{}

	init := model.Init(b)
	var enc model.Encoding
	// As successors are keyed (expand): at one process the group has no
	// exchange of processes, which would swap the idle slot in, starting
	// from the wrong state.
	x.canon.Encode(&init, &enc)

	// What is kept of each visited state: its fingerprint in seen, and in
	// links the state it was first reached from and the op that reached
	// it, enough to rebuild a shortest trace. Only the level being expanded
	// and the next one are kept whole. The liveness check also keeps the
	// quiet steps between states (graph), numbered as links numbers them.
	// The fingerprint mode keeps the fingerprints alone in memory and the
	// rest in files (spill).
	var (
		seen        visitedSet
		memSeen     *fpSet
		table       *fpTable
		parts       *visitedParts // instead of seen, with more than one worker
		g           *graph
		dg          *diskGraph
		links       *links
		level, next levelQueue
		sp          = &spill{temp: opts.TempFiles}
	)
	defer sp.close()
	if workers > 1 {
		x.parts = min(workers, maxParts)
	}
	if opts.Fingerprints {
		if x.parts > 0 {
			parts = newTableParts(x.parts, debug.FreeOSMemory)
			defer parts.free()
		} else {
			table = newFPTable(debug.FreeOSMemory)
			seen = table
			defer table.free()
		}
		links = newLinksIn(newDiskLinks(sp))
		level, next = newDiskFrontier(sp), newDiskFrontier(sp)
		if opts.Liveness {
			dg = newDiskGraph(sp)
			dg.release, dg.workers = debug.FreeOSMemory, workers
			x.stateFPs = true
		}
		if sp.err != nil {
			return Result{}, searched{}, sp.err
		}
	} else {
		if x.parts > 0 {
			parts = newMemParts(x.parts, opts.Liveness)
		} else {
			memSeen = newFPSet()
			seen = memSeen
			if opts.Liveness {
				memSeen.withIDs()
			}
		}
		if opts.Liveness {
			g = &graph{}
		}
		links = newLinks()
		level, next = &frontier{}, &frontier{}
	}
	if parts != nil {
		parts.addFirst(enc.Fingerprint())
	} else {
		seen.addID(enc.Fingerprint(), 0)
	}
	level.push(&enc)
	base, states, pending := 0, 1, true // index of level[0]; states visited; a state not yet expanded
	// The fingerprint tables are Go heap too: the heap alone is the bound's
	// figure (adding their bytes counted them twice).
	memory := opts.heapBytes
	if memory == nil {
		memory = heapBytes
	}

	res := Result{Design: d.Name, Bounds: b, Workers: workers}
	for depth := 0; level.count() > 0 && !res.Truncated && sp.err == nil; depth++ {
		res.Depth = depth + 1
		// The next level is kept, to be expanded, only within the bound
		// (Depth 0: none): the one past it is left empty.
		keep := depth+1 != b.Depth
		next.reset()
		pending = false
		k := 0
		stop := false
		// merge takes one expanded state's successors, in the order a
		// single worker finds them, so every worker count visits the same
		// states in the same order and keeps the same traces.
		merge := func(c *chunk) {
			covered |= c.covered
			if parts != nil {
				parts.startChunk()
			}
			e, rr := 0, 0 // the next entry in c.next, c.born and c.fp (successors that are not self-loops); in c.rare
			// rareStep takes c.rare's next entry, a step out of state i:
			// the covers it reaches and the invariants it breaks (those of
			// the state it enters, on first sight only: they hold or fail
			// with the state).
			rareStep := func(i int32, isNew bool) {
				r := &c.rare[rr]
				rr++
				for nc := r.covers; nc != 0; {
					bit := bits.TrailingZeros64(nc)
					nc &^= 1 << bit
					if _, ok := reached[bit]; !ok {
						reached[bit] = links.trace(i, r.op)
					}
				}
				viol := r.stepViol
				if isNew {
					viol |= r.stateViol
				}
				for viol != 0 {
					bit := bits.TrailingZeros32(viol)
					viol &^= 1 << bit
					inv := x.invs[bit]
					if _, ok := found[inv]; !ok {
						found[inv] = Violation{Invariant: inv, Trace: links.trace(i, r.op)}
					}
				}
			}
			for j, cnt := range c.counts {
				i := int32(base + k)
				if g != nil {
					g.startNode()
				}
				if dg != nil {
					dg.startNode(i, c.fps[j])
				}
				row := c.succ[c.first[j] : c.first[j]+cnt]
				for k := range row {
					sc := &row[k]
					res.Transitions++
					if sc.flags&succSelf != 0 {
						// A step back to state i: seen, and no edge of the graph.
						if sc.flags&succRare != 0 {
							rareStep(i, false)
						}
						continue
					}
					enc := e
					e++
					var target uint32
					var isNew bool
					if parts != nil {
						target, isNew = parts.resolve(c, sc.part, uint32(states), g != nil && sc.edge&edgeQuiet != 0)
					} else {
						target, isNew = seen.addID(c.fp[enc], uint32(states))
					}
					if sc.flags&succRare != 0 {
						rareStep(i, isNew)
					}
					if isNew {
						n := &c.born[enc]
						links.add(i, n.op, n.ren)
						states++
						pending = true
						if keep {
							next.push(&c.next[enc])
						}
					}
					if g != nil && sc.edge&edgeQuiet != 0 {
						g.add(target, sc.edge)
					}
					if dg != nil && sc.edge&edgeQuiet != 0 && sc.edge&edgeConverged == 0 {
						dg.add(c.fp[enc], sc.edge)
					}
				}
				kk := k
				k++
				if kk&1023 == 0 && tick.due() {
					tick.printf("depth %d, %d states, queue %d, %d transitions, %.0f states/s",
						depth+1, states, level.count()-k+next.count(), res.Transitions, float64(states)/time.Since(start).Seconds())
				}
				if opts.MaxStates > 0 && states >= opts.MaxStates {
					res.Truncated, stop = true, true
					return
				}
				if kk&4095 == 0 && stopped(opts.Stop) {
					res.Interrupted, res.Truncated, stop = true, true, true
					return
				}
				if sp.err != nil {
					stop = true
					return
				}
				if kk&4095 == 0 && opts.MaxHeapBytes > 0 && memory() > opts.MaxHeapBytes {
					res.OutOfMemory, res.Truncated, stop = true, true, true
					return
				}
			}
		}
		var insert func(p int, c *chunk)
		if parts != nil {
			insert = parts.insert
		}
		x.expandLevel(level, workers, insert, merge, func() bool { return stop })
		base += level.count()
		level, next = next, level
		if allFound(found, opts.StopWhenFound) {
			res.Stopped = true
			break
		}
	}
	if sp.err != nil {
		return Result{}, searched{}, sp.err
	}
	res.Exhausted = !pending && !res.Truncated && !res.Stopped
	res.States = states
	var ids stateIDs = memSeen
	switch {
	case parts != nil:
		res.VisitedBytes = parts.bytes()
		ids = parts
	case table != nil:
		res.VisitedBytes = table.bytes()
	default:
		res.VisitedBytes = uint64(len(memSeen.slots))*8 + uint64(len(memSeen.ids))*4
	}
	res.Seconds = time.Since(start).Seconds()
	for _, inv := range spec.Invariants() {
		if v, ok := found[inv.ID]; ok {
			res.Violations = append(res.Violations, v)
		}
	}
	for c := range covers {
		if covered&(1<<c) != 0 {
			res.Covered = append(res.Covered, covers[c].Name)
			res.Reached = append(res.Reached, Reach{Cover: covers[c].Name, Trace: reached[c]})
		}
	}
	livenessStart := time.Now()
	if g != nil && res.Exhausted {
		g.finish()
		res.Liveness = checkLiveness(&d, b, g, links, ids, &x.canon, tick)
	}
	if dg != nil && res.Exhausted {
		// The search is over: the fingerprints are not needed to judge
		// the graph, so their memory goes before the graph's comes.
		if parts != nil {
			parts.free()
		} else {
			table.free()
		}
		lg, ids := dg.load(tick)
		if sp.err != nil {
			return Result{}, searched{}, sp.err
		}
		res.Liveness = checkLiveness(&d, b, lg, renumbered{links, dg}, ids, &x.canon, tick)
		if sp.err != nil {
			return Result{}, searched{}, sp.err
		}
	}
	if res.Liveness.Checked {
		res.LivenessSeconds = time.Since(livenessStart).Seconds()
	}
	if tick != nil {
		tick.printf("done: depth %d, %d states, %d transitions, %.2fs, %.0f states/s, %d violations",
			res.Depth, res.States, res.Transitions, res.Seconds, res.StatesPerSecond(), len(res.Violations))
	}
	if opts.Fingerprints {
		return res, searched{}, nil
	}
	return res, searched{g, links, ids}, nil
}

// ticker writes the run's progress lines, at most one an interval; nil
// writes none.
type ticker struct {
	w     io.Writer
	name  string
	every time.Duration
	last  time.Time
}

func newTicker(w io.Writer, name string, every time.Duration, start time.Time) *ticker {
	if w == nil {
		return nil
	}
	return &ticker{w: w, name: name, every: every, last: start}
}

// due reports whether a line is due, and if so starts the next interval.
func (t *ticker) due() bool {
	if t == nil {
		return false
	}
	now := time.Now()
	if now.Sub(t.last) < t.every {
		return false
	}
	t.last = now
	return true
}

func (t *ticker) printf(format string, args ...any) {
	fmt.Fprintf(t.w, "explore %s: "+format+"\n", append([]any{t.name}, args...)...)
}

// symmetries is the group of renamings the run identifies states under.
func (o *Options) symmetries() model.Renaming {
	if o.NoSymmetry {
		return 0
	}
	g := o.Bounds.Symmetries()
	if o.NoNameSymmetry {
		g &^= model.SwapNames
	}
	return g
}

// stopped reports whether stop is closed, without waiting.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// heapBytes is the live Go heap, from runtime/metrics (no stop-the-world,
// unlike runtime.ReadMemStats).
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func allFound(found map[spec.InvariantID]Violation, want []spec.InvariantID) bool {
	if len(want) == 0 {
		return false
	}
	for _, inv := range want {
		if _, ok := found[inv]; !ok {
			return false
		}
	}
	return true
}
