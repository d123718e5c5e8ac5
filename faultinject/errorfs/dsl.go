package errorfs

import (
	"fmt"
	"strconv"
	"strings"
)

// The DSL is a small s-expression language; every injector's String prints
// it and Parse reads it back, so the text in a test log (or a simrun
// --faults flag) rebuilds the same injector:
//
//	INJ  := enospc | eio | eintr | enomem | erofs | eacces | notexist
//	      | wouldblock | none
//	      | lie                           a flush reports success, flushes nothing
//	      | (short N INJ-ERRNO)           write N bytes, then fail
//	      | (if PRED INJ)
//	      | (onIndex N [PRED] INJ)        the N-th (0-based) op matching PRED
//	      | (randomly P SEED [PRED] INJ)  each matching op with probability P,
//	                                      one generator per path
//	      | (randomCalls P SEED [PRED] INJ)  the same, one generator in all
//	      | (any INJ...) | (counter INJ) | (toggle INJ)
//	PRED := reads | writes | (ops KIND...) | (path "GLOB")
//	      | (and PRED...) | (or PRED...) | (not PRED)
//	      | (onIndex N) | (randomly P SEED) | (randomCalls P SEED)
//
// KIND is an OpKind name (open create rename remove stat readdir syncdir
// read write close size truncate allocate sync syncdata map lock unlock
// msync mprotect munmap).

// Parse reads one injector. Errors wrap ErrSyntax.
func Parse(s string) (Injector, error) { return parseWhole(s, injector) }

// ParsePredicate reads one predicate. Errors wrap ErrSyntax.
func ParsePredicate(s string) (Predicate, error) { return parseWhole(s, predicate) }

// parseWhole reads exactly one expression from s, so a flag value with a
// typo after the closing parenthesis is an error rather than silently cut.
func parseWhole[T any](s string, conv func(node) (T, error)) (T, error) {
	var zero T
	toks, err := tokenize(s)
	if err != nil {
		return zero, err
	}
	p := &parser{toks: toks}
	n, err := p.node()
	if err != nil {
		return zero, err
	}
	if p.pos != len(p.toks) {
		return zero, fmt.Errorf("%w: trailing %q", ErrSyntax, p.toks[p.pos])
	}
	return conv(n)
}

// node is an atom (list == nil) or a list whose first element is an atom.
type node struct {
	atom string
	list []node
	isL  bool
}

func (n node) head() string {
	if !n.isL || len(n.list) == 0 || n.list[0].isL {
		return ""
	}
	return n.list[0].atom
}

func (n node) String() string {
	if !n.isL {
		return n.atom
	}
	parts := make([]string, len(n.list))
	for i, c := range n.list {
		parts[i] = c.String()
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func tokenize(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')':
			toks = append(toks, string(c))
			i++
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, fmt.Errorf("%w: unterminated string", ErrSyntax)
			}
			toks = append(toks, s[i:j+1])
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r()\"", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

type parser struct {
	toks []string
	pos  int
}

func (p *parser) node() (node, error) {
	if p.pos >= len(p.toks) {
		return node{}, fmt.Errorf("%w: unexpected end", ErrSyntax)
	}
	t := p.toks[p.pos]
	p.pos++
	switch t {
	case ")":
		return node{}, fmt.Errorf("%w: unexpected )", ErrSyntax)
	case "(":
		n := node{isL: true}
		for {
			if p.pos >= len(p.toks) {
				return node{}, fmt.Errorf("%w: missing )", ErrSyntax)
			}
			if p.toks[p.pos] == ")" {
				p.pos++
				if len(n.list) == 0 || n.list[0].isL {
					return node{}, fmt.Errorf("%w: list must start with a name", ErrSyntax)
				}
				return n, nil
			}
			c, err := p.node()
			if err != nil {
				return node{}, err
			}
			n.list = append(n.list, c)
		}
	}
	return node{atom: t}, nil
}

func errno(n node) (*Errno, error) {
	if !n.isL {
		for _, e := range errnos {
			if e.name == n.atom {
				return e, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %s is not an error name", ErrSyntax, n)
}

func injector(n node) (Injector, error) {
	if !n.isL {
		switch n.atom {
		case "none":
			return None, nil
		case "lie":
			return Lie, nil
		}
		return errno(n)
	}
	args := n.list[1:]
	switch h := n.head(); h {
	case "short":
		if len(args) != 2 {
			return nil, arity(n)
		}
		k, err := integer(args[0])
		if err != nil {
			return nil, err
		}
		if k < 0 {
			return nil, fmt.Errorf("%w: negative short write length in %s", ErrSyntax, n)
		}
		e, err := errno(args[1])
		if err != nil {
			return nil, err
		}
		return &ShortWrite{N: k, Cause: e}, nil
	case "if":
		if len(args) != 2 {
			return nil, arity(n)
		}
		pr, err := predicate(args[0])
		if err != nil {
			return nil, err
		}
		inj, err := injector(args[1])
		if err != nil {
			return nil, err
		}
		return If(pr, inj), nil
	case "onIndex":
		if len(args) != 2 && len(args) != 3 {
			return nil, arity(n)
		}
		k, err := integer(args[0])
		if err != nil {
			return nil, err
		}
		pr, inj, err := optPredInj(args[1:])
		if err != nil {
			return nil, err
		}
		return InjectOnIndex(k, pr, inj), nil
	case "randomly", "randomCalls":
		if len(args) != 3 && len(args) != 4 {
			return nil, arity(n)
		}
		prob, seed, err := probSeed(args[0], args[1])
		if err != nil {
			return nil, err
		}
		pr, inj, err := optPredInj(args[2:])
		if err != nil {
			return nil, err
		}
		if h == "randomCalls" {
			return InjectRandomCalls(prob, seed, pr, inj), nil
		}
		return InjectRandomly(prob, seed, pr, inj), nil
	case "any":
		injs, err := each(args, injector)
		if err != nil {
			return nil, err
		}
		return Any(injs...), nil
	case "counter", "toggle":
		if len(args) != 1 {
			return nil, arity(n)
		}
		inj, err := injector(args[0])
		if err != nil {
			return nil, err
		}
		if h == "counter" {
			return NewCounter(inj), nil
		}
		return NewToggle(inj), nil
	}
	return nil, fmt.Errorf("%w: unknown injector %s", ErrSyntax, n)
}

// each converts every argument, stopping at the first error.
func each[T any](args []node, conv func(node) (T, error)) ([]T, error) {
	out := make([]T, 0, len(args))
	for _, a := range args {
		v, err := conv(a)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func optPredInj(args []node) (Predicate, Injector, error) {
	var pr Predicate
	if len(args) == 2 {
		var err error
		if pr, err = predicate(args[0]); err != nil {
			return nil, nil, err
		}
		args = args[1:]
	}
	inj, err := injector(args[0])
	return pr, inj, err
}

func predicate(n node) (Predicate, error) {
	if !n.isL {
		switch n.atom {
		case "reads":
			return Reads, nil
		case "writes":
			return Writes, nil
		}
		return nil, fmt.Errorf("%w: unknown predicate %s", ErrSyntax, n)
	}
	args := n.list[1:]
	switch n.head() {
	case "ops":
		if len(args) == 0 {
			return nil, arity(n)
		}
		kinds := make([]OpKind, 0, len(args))
		for _, a := range args {
			if a.isL {
				return nil, fmt.Errorf("%w: op kind expected, got %s", ErrSyntax, a)
			}
			k, err := ParseOpKind(a.atom)
			if err != nil {
				return nil, err
			}
			kinds = append(kinds, k)
		}
		return OpKinds(kinds...), nil
	case "path":
		if len(args) != 1 || args[0].isL {
			return nil, arity(n)
		}
		s, err := strconv.Unquote(args[0].atom)
		if err != nil {
			return nil, fmt.Errorf("%w: path wants a quoted pattern, got %s", ErrSyntax, args[0])
		}
		return PathMatch(s), nil
	case "and", "or":
		ps, err := each(args, predicate)
		if err != nil {
			return nil, err
		}
		if n.head() == "and" {
			return And(ps...), nil
		}
		return Or(ps...), nil
	case "not":
		if len(args) != 1 {
			return nil, arity(n)
		}
		pr, err := predicate(args[0])
		if err != nil {
			return nil, err
		}
		return Not(pr), nil
	case "onIndex":
		if len(args) != 1 {
			return nil, arity(n)
		}
		k, err := integer(args[0])
		if err != nil {
			return nil, err
		}
		return OnIndex(k), nil
	case "randomly", "randomCalls":
		if len(args) != 2 {
			return nil, arity(n)
		}
		prob, seed, err := probSeed(args[0], args[1])
		if err != nil {
			return nil, err
		}
		if n.head() == "randomCalls" {
			return RandomCalls(prob, seed), nil
		}
		return Randomly(prob, seed), nil
	}
	return nil, fmt.Errorf("%w: unknown predicate %s", ErrSyntax, n)
}

func arity(n node) error { return fmt.Errorf("%w: wrong arguments in %s", ErrSyntax, n) }

func integer(n node) (int64, error) {
	if n.isL {
		return 0, fmt.Errorf("%w: number expected, got %s", ErrSyntax, n)
	}
	v, err := strconv.ParseInt(n.atom, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: number expected, got %s", ErrSyntax, n)
	}
	return v, nil
}

func probSeed(pn, sn node) (float64, uint64, error) {
	if pn.isL || sn.isL {
		return 0, 0, fmt.Errorf("%w: probability and seed expected", ErrSyntax)
	}
	p, err := strconv.ParseFloat(pn.atom, 64)
	if err != nil || p < 0 || p > 1 {
		return 0, 0, fmt.Errorf("%w: probability in [0,1] expected, got %s", ErrSyntax, pn)
	}
	s, err := strconv.ParseUint(sn.atom, 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: seed expected, got %s", ErrSyntax, sn)
	}
	return p, s, nil
}

func formatFloat(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }
