package explore

import (
	"slices"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// Liveness is the verdict on convergence (G3) over the whole explored
// graph, under fairness: the environment eventually stops (no upgrades,
// source changes, foreign writes, crashes, restarts or invalidations: only
// model.Quiet steps) and every process keeps launching (finalizes
// infinitely often). Convergence holds when every such behaviour reaches a
// model.ConvergedLaunch. It fails when the graph of quiet steps that are
// not converged launches has a fair cycle: a reachable strongly connected
// component in which every process finalizes. docs/model.md, "Liveness".
type Liveness struct {
	Checked bool
	// FairComponents counts the components with a fair cycle and no
	// converged launch.
	FairComponents int
	// Violations holds one lasso per broken property (today: I4).
	Violations []Lasso
}

// Lasso is a behaviour that never converges: Prefix from the start state,
// then Cycle forever (Cycle leads back to the state Prefix reached, and
// every process finalizes in it).
type Lasso struct {
	Invariant spec.InvariantID
	Prefix    []spec.Op
	Cycle     []spec.Op
}

// graph holds the quiet steps between visited states, by state number, in
// compressed rows: the steps out of state i are to[off[i]:off[i+1]].
type graph struct {
	off   blocks[uint32]
	to    blocks[uint32]
	flags blocks[uint8]
	n     int // edges
}

// startNode begins the steps out of the next state (states are expanded in
// the order they are numbered).
func (g *graph) startNode() { g.off.add(uint32(g.n)) }

func (g *graph) add(to uint32, flags uint8) {
	g.to.add(to)
	g.flags.add(flags)
	g.n++
}

// finish closes the last row.
func (g *graph) finish() { g.off.add(uint32(g.n)) }

func (g *graph) nodes() int { return g.off.len() - 1 }

func (g *graph) row(v int) (int, int) { return int(g.off.at(v)), int(g.off.at(v + 1)) }

// live reports whether edge e stays in the graph the check searches: quiet
// and not a converged launch.
func (g *graph) live(e int) bool { return g.flags.at(e)&edgeConverged == 0 }

// statePaths gives the shortest trace to a state of the graph (links, or
// renumbered in the fingerprint mode).
type statePaths interface{ path(v int32) []spec.Op }

// stateIDs names a state of the graph by its fingerprint (fpSet).
type stateIDs interface {
	lookup(fp uint64) (uint32, bool)
}

// componentIDs is a stateIDs that names only the states of one component
// once it is known (diskIDs: the fingerprint mode keeps no names in
// memory while it searches for components).
type componentIDs interface {
	only(members []int32) stateIDs
}

// checkLiveness finds the components of the graph of live edges and judges
// each for a fair cycle. The first fair component found gives the lasso.
// The search is Pearce's variant of Tarjan's ("A space-efficient algorithm
// for finding strongly connected components", 2016), without recursion:
// one number a state (rindex) where Tarjan keeps two, index and lowlink —
// at a hundred million states the graph and its search are what the
// fingerprint mode holds in memory.
func checkLiveness(d *model.Design, b model.Bounds, g *graph, l statePaths, seen stateIDs, canon *model.Canon, tick *ticker) Liveness {
	symmetric := canon.Group()&model.SwapProcs != 0
	res := Liveness{Checked: true}
	n := g.nodes()
	// rindex: 0 not visited; > 0 the least discovery number (from 1) the
	// state is known to reach while its component is open; -c once it is
	// in component c (from 1).
	rindex := make([]int32, n)
	var stack []int32 // states whose walk is done and whose component is open
	type frame struct {
		v    int32
		e, h uint32 // the next step of v's row to take, and the row's end (graph.off's width)
		root bool   // no state found that v reaches and that was discovered before it
	}
	var calls []frame
	next := int32(1)
	comps := int32(0)
	parity := make([]uint8, n) // per node of the component being judged: 1 = visited, 2 = odd
	var fair []int32           // the first fair component's nodes
	push := func(v int32) {
		rindex[v] = next
		if next&4095 == 0 && tick.due() {
			tick.printf("liveness: %d of %d states, %d components", next, n, comps)
		}
		next++
		e, h := g.row(int(v))
		calls = append(calls, frame{v, uint32(e), uint32(h), true}) // 16 bytes: the walk can be as deep as the graph
	}
	for root := range n {
		if rindex[root] != 0 {
			continue
		}
		push(int32(root))
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			if f.e < f.h {
				if !g.live(int(f.e)) {
					f.e++
					continue
				}
				w := int32(g.to.at(int(f.e)))
				if rindex[w] == 0 {
					push(w) // and come back to this step when w is done
					continue
				}
				if r := rindex[w]; r > 0 && r < rindex[f.v] {
					rindex[f.v], f.root = r, false
				}
				f.e++
				continue
			}
			v, isRoot := f.v, f.root
			calls = calls[:len(calls)-1]
			stack = append(stack, v)
			if !isRoot {
				continue
			}
			// v is the root of a component: it is v and the states
			// above it on the stack, each numbered at least as v.
			k := len(stack) - 1
			for k > 0 && rindex[stack[k-1]] >= rindex[v] {
				k--
			}
			members := stack[k:]
			comps++
			for _, m := range members {
				rindex[m] = -comps
			}
			if isFair(g, b, members, rindex, parity, -comps, symmetric) {
				res.FairComponents++
				if fair == nil {
					fair = append([]int32(nil), members...)
				}
			}
			stack = stack[:k]
		}
	}
	if fair != nil {
		if c, ok := seen.(componentIDs); ok {
			seen = c.only(fair)
		}
		if lasso, ok := buildLasso(d, b, g, l, seen, fair, rindex, canon); ok {
			res.Violations = append(res.Violations, lasso)
		}
	}
	return res
}

// isFair reports whether the component (members, marked comp in comp[])
// has a cycle in which every process finalizes. With the processes' mirror
// images merged (symmetric), a step that swaps the processes renames them
// for the rest of the way round: a walk through the component assigns each
// state a parity (whether its process A is the canonical state's B), and a
// finalize by canonical process p at a state of parity q is a finalize by
// process p xor q. A component whose parities conflict has a cycle that
// swaps them, and going round it twice lets each process take each
// finalize.
func isFair(g *graph, b model.Bounds, members []int32, comp []int32, parity []uint8, c int32, symmetric bool) bool {
	var launched uint8 // bit p: process p finalizes somewhere in the component
	conflict := false
	internal := false
	queue := []int32{members[0]}
	parity[members[0]] = 1
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		pu := parity[u] >> 1
		e, h := g.row(int(u))
		for ; e < h; e++ {
			if !g.live(e) {
				continue
			}
			w := int32(g.to.at(e))
			if comp[w] != c {
				continue
			}
			internal = true
			fl := g.flags.at(e)
			if fl&edgeLaunch != 0 {
				p := b2u8(fl&edgeLaunchB != 0)
				if symmetric {
					p ^= pu
				}
				launched |= 1 << p
			}
			pw := pu
			if symmetric && fl&edgeSwapped != 0 {
				pw ^= 1
			}
			switch {
			case parity[w] == 0:
				parity[w] = 1 | pw<<1
				queue = append(queue, w)
			case parity[w]>>1 != pw:
				conflict = true
			}
		}
	}
	for _, m := range members {
		parity[m] = 0
	}
	if !internal || launched == 0 {
		return false
	}
	all := uint8(1)<<b.Procs - 1
	return launched == all || conflict
}

func b2u8(x bool) uint8 {
	if x {
		return 1
	}
	return 0
}

// A node of the search for a fair cycle: a state and the parity of the
// concrete run's naming of its processes against the canonical one.
type pnode struct {
	v int32
	q uint8
}

// buildLasso turns a fair component into a concrete behaviour: the
// shortest trace to its first-found state, then a walk through the
// component that finalizes on every process and comes back, rebuilt op by
// op by stepping the model again from the concrete state (the explorer
// keeps no states, only fingerprints).
func buildLasso(d *model.Design, b model.Bounds, g *graph, l statePaths, seen stateIDs, members []int32, comp []int32, canon *model.Canon) (Lasso, bool) {
	symmetric := canon.Group()&model.SwapProcs != 0
	v := members[0]
	for _, m := range members {
		v = min(v, m)
	}
	c := comp[v]
	prefix := l.path(v)
	outs, err := model.Replay(d, b, prefix)
	if err != nil {
		return Lasso{}, false
	}
	s := model.Init(b)
	if len(outs) > 0 {
		s = outs[len(outs)-1].Next
	}
	start := s
	var e0 model.Encoding
	q0 := uint8(0)
	if canon.Encode(&s, &e0)&model.SwapProcs != 0 {
		q0 = 1
	}
	// Edges to take: search the product of states and parities for a
	// finalize by each process still owed one, then for the way back.
	type step struct {
		from pnode
		edge int
	}
	search := func(from pnode, goal func(p pnode, edge int) bool) ([]step, pnode, bool) {
		prev := map[pnode]step{}
		queue := []pnode{from}
		seenP := map[pnode]bool{from: true}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			e, h := g.row(int(u.v))
			for ; e < h; e++ {
				if !g.live(e) {
					continue
				}
				w := int32(g.to.at(e))
				if comp[w] != c {
					continue
				}
				fl := g.flags.at(e)
				wq := u.q
				if symmetric && fl&edgeSwapped != 0 {
					wq ^= 1
				}
				pw := pnode{w, wq}
				if goal(u, e) {
					path := []step{{u, e}}
					for x := u; x != from; {
						st := prev[x]
						path = append(path, st)
						x = st.from
					}
					slices.Reverse(path)
					return path, pw, true
				}
				if !seenP[pw] {
					seenP[pw] = true
					prev[pw] = step{u, e}
					queue = append(queue, pw)
				}
			}
		}
		return nil, pnode{}, false
	}
	owed := uint8(1)<<b.Procs - 1
	at := pnode{v, q0}
	var walk []step
	for owed != 0 {
		path, to, ok := search(at, func(p pnode, e int) bool {
			fl := g.flags.at(e)
			if fl&edgeLaunch == 0 {
				return false
			}
			proc := b2u8(fl&edgeLaunchB != 0)
			if symmetric {
				proc ^= p.q
			}
			return owed&(1<<proc) != 0
		})
		if !ok {
			return Lasso{}, false
		}
		fl := g.flags.at(path[len(path)-1].edge)
		proc := b2u8(fl&edgeLaunchB != 0)
		if symmetric {
			proc ^= path[len(path)-1].from.q
		}
		owed &^= 1 << proc
		walk = append(walk, path...)
		at = to
	}
	if at != (pnode{v, q0}) {
		path, _, ok := search(at, func(p pnode, e int) bool {
			w := int32(g.to.at(e))
			wq := p.q
			if symmetric && g.flags.at(e)&edgeSwapped != 0 {
				wq ^= 1
			}
			return w == v && wq == q0
		})
		if !ok {
			return Lasso{}, false
		}
		walk = append(walk, path...)
	}
	// Rebuild each edge as a concrete op: the op from the concrete state
	// whose outcome is the edge's target, with the edge's flags.
	x := newExpander(d, b, *canon)
	cycle := make([]spec.Op, 0, len(walk))
	var buf []model.Outcome
	var enc model.Encoding
	// A state equal to its own mirror image has no parity to go by, so
	// the walk's planned process may be either: the strict pass asks for
	// the planned one, the second takes any.
	match := func(st step, strict bool) (model.Outcome, bool) {
		want, wantFl := g.to.at(st.edge), g.flags.at(st.edge)
		for _, op := range x.alphabet {
			if !model.Quiet(op) {
				continue
			}
			buf = model.StepAppend(buf[:0], d, b, &s, op)
			for o := range buf {
				out := &buf[o]
				swapped := canon.Encode(&out.Next, &enc)&model.SwapProcs != 0
				if id, ok := seen.lookup(enc.Fingerprint()); !ok || id != want {
					continue
				}
				t := model.Transition{Prev: &s, Out: out}
				if edgeFlags(b, t, false)&^edgeLaunchB != wantFl&^(edgeSwapped|edgeLaunchB) {
					continue
				}
				if strict && symmetric && !canon.ProcsAmbiguous(out.Next) {
					// The run must name the processes of the state it
					// enters as the walk planned.
					if b2u8(swapped) != st.from.q^b2u8(wantFl&edgeSwapped != 0) {
						continue
					}
				}
				if strict && wantFl&edgeLaunch != 0 {
					planned := b2u8(wantFl&edgeLaunchB != 0)
					if symmetric {
						planned ^= st.from.q
					}
					if uint8(out.Op.Proc) != planned {
						continue
					}
				}
				return *out, true
			}
		}
		return model.Outcome{}, false
	}
	for _, st := range walk {
		out, ok := match(st, true)
		if !ok {
			out, ok = match(st, false)
		}
		if !ok {
			return Lasso{}, false
		}
		cycle = append(cycle, out.Op)
		s = out.Next
	}
	// The walk ends at the start up to renaming and dead fields (it
	// follows the processes' parity where a state has one, never the
	// names' or the dead fields'): going round again, renamed (Step
	// commutes with renaming, and dead fields change no step), closes it.
	prefix, cycle, ok := closeRounds(d, b, canon, start, s, prefix, cycle)
	if !ok {
		return Lasso{}, false
	}
	var finalized uint8
	for _, op := range cycle {
		if op.Kind == spec.OpFinalize {
			finalized |= 1 << op.Proc
		}
	}
	if finalized != uint8(1)<<b.Procs-1 {
		return Lasso{}, false // not fair after all
	}
	return Lasso{Invariant: spec.InvConverge, Prefix: prefix, Cycle: cycle}, true
}

// closeRounds takes round, a walk from start to s that is start up to a
// renaming in canon's group and dead fields, round again from s, renamed as
// the last round ended, until a state repeats exactly: the cycle is the
// rounds from that state's first visit, and the rounds before it follow
// prefix. False when a renamed step is not one step, or after 64 rounds.
func closeRounds(d *model.Design, b model.Bounds, canon *model.Canon, start, s model.State, prefix, round []spec.Op) ([]spec.Op, []spec.Op, bool) {
	cycle := round
	roundAt := map[model.State]int{start: 0}
	ends := []int{0, len(cycle)}
	for {
		if i, ok := roundAt[s]; ok {
			return append(prefix, cycle[:ends[i]]...), cycle[ends[i]:], true
		}
		if len(ends) > 64 {
			return nil, nil, false
		}
		roundAt[s] = len(ends) - 1
		r, ok := renamingTo(canon, start, s)
		if !ok {
			return nil, nil, false
		}
		for _, op := range round {
			o := model.Step(d, b, s, r.Op(op))
			if len(o) != 1 {
				return nil, nil, false
			}
			cycle = append(cycle, o[0].Op)
			s = o[0].Next
		}
		ends = append(ends, len(cycle))
	}
}

// renamingTo returns the renaming in canon's group that takes from to to,
// up to dead fields.
func renamingTo(canon *model.Canon, from, to model.State) (model.Renaming, bool) {
	g := canon.Group()
	for r := model.Renaming(0); r <= g; r++ {
		if r&^g == 0 && canon.Same(from.Renamed(r), to) {
			return r, true
		}
	}
	return 0, false
}
