package errorfs

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"sync"
	"sync/atomic"
)

// Injector decides, before each seam call, whether the call fails. It is
// asked with the Op the call is about to perform; a nil result lets the call
// through. String prints the injector in the DSL that Parse reads, so a
// failing set-up can be replayed from a test log.
type Injector interface {
	MaybeError(Op) error
	String() string
}

// Predicate selects ops. Stateful predicates (OnIndex, Randomly) advance
// only when evaluated, so under And they count only the ops that passed the
// predicates before them.
type Predicate interface {
	Evaluate(Op) bool
	String() string
}

// --- predicates ---------------------------------------------------------

type readsPred struct{}

func (readsPred) Evaluate(op Op) bool { return !op.Kind.IsWrite() }
func (readsPred) String() string      { return "reads" }

type writesPred struct{}

func (writesPred) Evaluate(op Op) bool { return op.Kind.IsWrite() }
func (writesPred) String() string      { return "writes" }

// Reads holds for every op that changes nothing (see OpKind.IsWrite).
var Reads Predicate = readsPred{}

// Writes holds for every op that changes contents, names or durability.
var Writes Predicate = writesPred{}

type kindsPred []OpKind

// OpKinds holds for ops of any of the given kinds.
func OpKinds(kinds ...OpKind) Predicate { return kindsPred(kinds) }

func (k kindsPred) Evaluate(op Op) bool {
	for _, x := range k {
		if op.Kind == x {
			return true
		}
	}
	return false
}

func (k kindsPred) String() string { return listString("ops", k) }

type pathPred string

// PathMatch holds when the op's path (or a rename's new path) matches the
// path.Match pattern against either the whole path or its base name, so
// "*.tmp" selects temporary files in any directory.
func PathMatch(pattern string) Predicate { return pathPred(pattern) }

func (p pathPred) Evaluate(op Op) bool {
	return p.match(op.Path) || (op.NewPath != "" && p.match(op.NewPath))
}

func (p pathPred) match(name string) bool {
	if ok, _ := path.Match(string(p), name); ok {
		return true
	}
	ok, _ := path.Match(string(p), path.Base(name))
	return ok
}

func (p pathPred) String() string { return fmt.Sprintf("(path %q)", string(p)) }

type andPred []Predicate

// And holds when all of ps hold; it stops at the first that does not.
func And(ps ...Predicate) Predicate { return andPred(ps) }

func (a andPred) Evaluate(op Op) bool {
	for _, p := range a {
		if !p.Evaluate(op) {
			return false
		}
	}
	return true
}

func (a andPred) String() string { return listString("and", a) }

type orPred []Predicate

// Or holds when any of ps holds; it stops at the first that does.
func Or(ps ...Predicate) Predicate { return orPred(ps) }

func (o orPred) Evaluate(op Op) bool {
	for _, p := range o {
		if p.Evaluate(op) {
			return true
		}
	}
	return false
}

func (o orPred) String() string { return listString("or", o) }

type notPred struct{ p Predicate }

// Not negates p.
func Not(p Predicate) Predicate { return notPred{p} }

func (n notPred) Evaluate(op Op) bool { return !n.p.Evaluate(op) }
func (n notPred) String() string      { return "(not " + n.p.String() + ")" }

func listString[T interface{ String() string }](head string, xs []T) string {
	var b strings.Builder
	b.WriteString("(" + head)
	for _, x := range xs {
		b.WriteString(" " + x.String())
	}
	b.WriteString(")")
	return b.String()
}

// IndexPredicate holds on exactly one evaluation: the n-th, counting from 0.
// Crash-point and error-point enumeration run a workload once per n.
type IndexPredicate struct {
	n    int64
	seen atomic.Int64
}

// OnIndex returns a predicate that holds on its n-th evaluation (0-based).
func OnIndex(n int64) *IndexPredicate { return &IndexPredicate{n: n} }

// Evaluate implements Predicate.
func (p *IndexPredicate) Evaluate(Op) bool { return p.seen.Add(1)-1 == p.n }

// Seen is how many times the predicate was evaluated: after a run with an
// index past the end, it is the number of candidate ops of the workload.
func (p *IndexPredicate) Seen() int64 { return p.seen.Load() }

func (p *IndexPredicate) String() string { return fmt.Sprintf("(onIndex %d)", p.n) }

// RandomPredicate holds with probability p. Randomly keeps one generator
// per path, seeded from (seed, path), so the decisions for one file do not
// depend on how calls on other files interleave. RandomCalls keeps one
// generator for all calls, so the decisions depend only on the order of the
// calls: the right choice when file names are themselves random (temporary
// files), which would make per-path decisions differ from run to run.
type RandomPredicate struct {
	p       float64
	seed    uint64
	perPath bool
	mu      sync.Mutex
	rngs    map[string]*rand.Rand
}

// Randomly returns a predicate holding with probability p, deterministic
// under seed for each path's sequence of calls.
func Randomly(p float64, seed uint64) *RandomPredicate {
	return &RandomPredicate{p: p, seed: seed, perPath: true, rngs: map[string]*rand.Rand{}}
}

// RandomCalls returns a predicate holding with probability p, deterministic
// under seed for the sequence of all calls.
func RandomCalls(p float64, seed uint64) *RandomPredicate {
	return &RandomPredicate{p: p, seed: seed, rngs: map[string]*rand.Rand{}}
}

// Evaluate implements Predicate.
func (r *RandomPredicate) Evaluate(op Op) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := ""
	if r.perPath {
		key = op.Path
	}
	rng, ok := r.rngs[key]
	if !ok {
		rng = rand.New(rand.NewPCG(r.seed, fnv64(key)))
		r.rngs[key] = rng
	}
	return rng.Float64() < r.p
}

func (r *RandomPredicate) name() string {
	if r.perPath {
		return "randomly"
	}
	return "randomCalls"
}

func (r *RandomPredicate) String() string {
	return fmt.Sprintf("(%s %s %d)", r.name(), formatFloat(r.p), r.seed)
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// --- injectors ----------------------------------------------------------

type ifInj struct {
	p   Predicate
	inj Injector
}

// If injects inj's error whenever p holds.
func If(p Predicate, inj Injector) Injector { return &ifInj{p, inj} }

func (i *ifInj) MaybeError(op Op) error {
	if i.p.Evaluate(op) {
		return i.inj.MaybeError(op)
	}
	return nil
}

func (i *ifInj) String() string { return "(if " + i.p.String() + " " + i.inj.String() + ")" }

// gatedInj fails with inj the ops that pass the filter p (nil: every op)
// and then the stateful gate, so the gate counts or draws only for the ops
// the filter let through.
type gatedInj struct {
	gate Predicate // *IndexPredicate or *RandomPredicate
	p    Predicate
	inj  Injector
}

// InjectOnIndex fails the n-th (0-based) op matching p (nil = every op)
// with inj, and nothing else. DSL: (onIndex N [PRED] INJ).
func InjectOnIndex(n int64, p Predicate, inj Injector) Injector {
	return &gatedInj{gate: OnIndex(n), p: p, inj: inj}
}

// InjectRandomly fails each op matching p (nil = every op) with probability
// prob, deterministically under seed per path. DSL: (randomly P SEED [PRED] INJ).
func InjectRandomly(prob float64, seed uint64, p Predicate, inj Injector) Injector {
	return &gatedInj{gate: Randomly(prob, seed), p: p, inj: inj}
}

// InjectRandomCalls is InjectRandomly with one generator for all calls
// (see RandomCalls). DSL: (randomCalls P SEED [PRED] INJ).
func InjectRandomCalls(prob float64, seed uint64, p Predicate, inj Injector) Injector {
	return &gatedInj{gate: RandomCalls(prob, seed), p: p, inj: inj}
}

func (g *gatedInj) MaybeError(op Op) error {
	if (g.p == nil || g.p.Evaluate(op)) && g.gate.Evaluate(op) {
		return g.inj.MaybeError(op)
	}
	return nil
}

// String writes the filter and the injector inside the gate's own list:
// (onIndex N [PRED] INJ), (randomly P SEED [PRED] INJ).
func (g *gatedInj) String() string {
	s := strings.TrimSuffix(g.gate.String(), ")")
	if g.p != nil {
		s += " " + g.p.String()
	}
	return s + " " + g.inj.String() + ")"
}

type anyInj []Injector

// Any returns the first error of injs, asking them in order and stopping
// at the first that fires (later ones are not asked, so their counters do
// not advance).
func Any(injs ...Injector) Injector { return anyInj(injs) }

func (a anyInj) MaybeError(op Op) error {
	for _, inj := range a {
		if err := inj.MaybeError(op); err != nil {
			return err
		}
	}
	return nil
}

func (a anyInj) String() string { return listString("any", a) }

// Counter counts the errors its injector returned. A test that expects a
// fallback asserts Count() > 0: otherwise the fault never reached the code
// under test and the test proves nothing.
type Counter struct {
	inj Injector
	n   atomic.Int64
}

// NewCounter wraps inj.
func NewCounter(inj Injector) *Counter { return &Counter{inj: inj} }

// MaybeError implements Injector.
func (c *Counter) MaybeError(op Op) error {
	err := c.inj.MaybeError(op)
	if err != nil {
		c.n.Add(1)
	}
	return err
}

// Count is the number of errors injected so far.
func (c *Counter) Count() int64 { return c.n.Load() }

func (c *Counter) String() string { return "(counter " + c.inj.String() + ")" }

// Toggle passes its injector's errors through only while on, so a test can
// let set-up succeed and then turn faults on. It starts on.
type Toggle struct {
	inj Injector
	on  atomic.Bool
}

// NewToggle wraps inj, switched on.
func NewToggle(inj Injector) *Toggle {
	t := &Toggle{inj: inj}
	t.on.Store(true)
	return t
}

// On switches injection on.
func (t *Toggle) On() { t.on.Store(true) }

// Off switches injection off; the wrapped injector is not asked while off.
func (t *Toggle) Off() { t.on.Store(false) }

// MaybeError implements Injector.
func (t *Toggle) MaybeError(op Op) error {
	if !t.on.Load() {
		return nil
	}
	return t.inj.MaybeError(op)
}

func (t *Toggle) String() string { return "(toggle " + t.inj.String() + ")" }

// InjectorFunc adapts a function; its String is "func", which Parse rejects,
// so prefer the combinators when the set-up should be replayable.
type InjectorFunc func(Op) error

// MaybeError implements Injector.
func (f InjectorFunc) MaybeError(op Op) error { return f(op) }

func (f InjectorFunc) String() string { return "func" }

// None never injects; Wrap(fs, None) behaves like fs.
var None Injector = noneInj{}

type noneInj struct{}

func (noneInj) MaybeError(Op) error { return nil }
func (noneInj) String() string      { return "none" }
