package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The scenario text form of an Op: a verb followed by key=value arguments in
// a fixed order, one op per line, e.g.
//
//	init proc=A program=P1
//	lookup proc=A name=w0
//	crash kind=power branch=mid-save
//
// String and ParseOp are inverses on every valid Op, so a counterexample the
// explorer prints can be pasted into a scenario file and replayed.

// ErrBadOp is returned (wrapped in *OpError) when scenario text does not
// describe a valid Op.
var ErrBadOp = errors.New("spec: bad lifecycle op")

// OpError says which line and which argument of an op's text is wrong.
type OpError struct {
	Text string // the whole line
	Arg  string // the offending word, "" when the line as a whole is wrong
	Msg  string
}

func (e *OpError) Error() string {
	if e.Arg == "" {
		return fmt.Sprintf("spec: bad op %q: %s", e.Text, e.Msg)
	}
	return fmt.Sprintf("spec: bad op %q: %q: %s", e.Text, e.Arg, e.Msg)
}

func (e *OpError) Unwrap() error { return ErrBadOp }

// String formats a process as A, B, …
func (p Proc) String() string { return string(rune('A' + p)) }

// String formats a program as P1, P2, …
func (p Program) String() string { return "P" + strconv.Itoa(int(p)+1) }

// String formats a name as w0, w1, …
func (n Name) String() string { return "w" + strconv.Itoa(int(n)) }

// String formats a crash kind as process or power.
func (c CrashKind) String() string {
	switch c {
	case CrashProcess:
		return "process"
	case CrashPower:
		return "power"
	}
	return "invalid"
}

// String formats a foreign write as data or index.
func (f ForeignKind) String() string {
	switch f {
	case ForeignData:
		return "data"
	case ForeignIndex:
		return "index"
	}
	return "invalid"
}

// argument bits: which arguments an op kind takes.
const (
	argProc = 1 << iota
	argProgram
	argName
	argCrash
	argForeign
	argBranch
)

func (o Op) args() int {
	switch o.Kind {
	case OpInit, OpUnload:
		return argProc | argProgram
	case OpLookUp, OpReserve, OpInsert:
		return argProc | argName
	case OpInvalidate, OpCompute:
		return argProc | argName | argBranch
	case OpFinalize, OpSave:
		return argProc | argBranch
	case OpDestroy, EvRestart, EvClobberOptions:
		return argProc
	case EvCrash:
		if o.Crash == CrashProcess {
			return argCrash | argProc | argBranch
		}
		return argCrash | argBranch
	case EvKernelUpgrade:
		return 0
	case EvSourceChange:
		return argName
	case EvForeign:
		if o.Foreign == ForeignData {
			return argForeign | argName
		}
		return argForeign
	}
	return 0
}

// String is the op's scenario text.
func (o Op) String() string {
	var b strings.Builder
	b.WriteString(o.Kind.String())
	a := o.args()
	if a&argCrash != 0 {
		b.WriteString(" kind=" + o.Crash.String())
	}
	if a&argForeign != 0 {
		b.WriteString(" kind=" + o.Foreign.String())
	}
	if a&argProc != 0 {
		b.WriteString(" proc=" + o.Proc.String())
	}
	if a&argProgram != 0 {
		b.WriteString(" program=" + o.Program.String())
	}
	if a&argName != 0 {
		b.WriteString(" name=" + o.Name.String())
	}
	if a&argBranch != 0 && o.Branch != BranchNone {
		b.WriteString(" branch=" + o.Branch.String())
	}
	return b.String()
}

// ParseOp reads one op from its scenario text. Arguments may come in any
// order; every argument the verb takes except branch is required, and no
// other argument is accepted.
func ParseOp(line string) (Op, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return Op{}, &OpError{Text: line, Msg: "empty"}
	}
	var o Op
	for k := OpInit; k < opLimit; k++ {
		if fields[0] == k.String() {
			o.Kind = k
		}
	}
	if o.Kind == opInvalid {
		return Op{}, &OpError{Text: line, Arg: fields[0], Msg: "unknown verb"}
	}
	seen := 0
	for _, f := range fields[1:] {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			return Op{}, &OpError{Text: line, Arg: f, Msg: "want key=value"}
		}
		bit, err := o.setArg(key, val)
		if err != nil {
			return Op{}, &OpError{Text: line, Arg: f, Msg: err.Error()}
		}
		if seen&bit != 0 {
			return Op{}, &OpError{Text: line, Arg: f, Msg: "repeated"}
		}
		seen |= bit
	}
	// args() depends on kind= for crash and foreign, so check only now.
	want := o.args()
	if extra := seen &^ want; extra != 0 {
		return Op{}, &OpError{Text: line, Msg: "argument not taken by " + o.Kind.String()}
	}
	if missing := want &^ seen &^ argBranch; missing != 0 {
		return Op{}, &OpError{Text: line, Msg: "missing argument for " + o.Kind.String()}
	}
	// A crash has crash branches, a commit only the compaction branch.
	if commits := o.Kind != EvCrash; seen&argBranch != 0 && commits != (o.Branch == BranchCompact) {
		return Op{}, &OpError{Text: line, Msg: "branch " + o.Branch.String() + " not taken by " + o.Kind.String()}
	}
	return o, nil
}

func (o *Op) setArg(key, val string) (int, error) {
	switch key {
	case "proc":
		if len(val) != 1 || val[0] < 'A' || val[0] >= 'A'+MaxProcs {
			return 0, errors.New("want a process A…" + Proc(MaxProcs-1).String())
		}
		o.Proc = Proc(val[0] - 'A')
		return argProc, nil
	case "program":
		n, err := smallIndex(val, "P", 1, MaxPrograms)
		o.Program = Program(n)
		return argProgram, err
	case "name":
		n, err := smallIndex(val, "w", 0, MaxNames)
		o.Name = Name(n)
		return argName, err
	case "kind":
		switch {
		case o.Kind == EvCrash && val == "process":
			o.Crash = CrashProcess
			return argCrash, nil
		case o.Kind == EvCrash && val == "power":
			o.Crash = CrashPower
			return argCrash, nil
		case o.Kind == EvForeign && val == "data":
			o.Foreign = ForeignData
			return argForeign, nil
		case o.Kind == EvForeign && val == "index":
			o.Foreign = ForeignIndex
			return argForeign, nil
		}
		return 0, errors.New("unknown kind for " + o.Kind.String())
	case "branch":
		for b := BranchIdle; b < branchLimit; b++ {
			if val == b.String() {
				o.Branch = b
				return argBranch, nil
			}
		}
		return 0, errors.New("unknown branch")
	}
	return 0, errors.New("unknown argument")
}

// smallIndex parses prefix+digits with digits-base in [0, limit).
func smallIndex(val, prefix string, base, limit int) (int, error) {
	digits, ok := strings.CutPrefix(val, prefix)
	n, err := strconv.Atoi(digits)
	if !ok || err != nil || n-base < 0 || n-base >= limit {
		return 0, fmt.Errorf("want %s%d…%s%d", prefix, base, prefix, base+limit-1)
	}
	return n - base, nil
}

// FormatTrace writes ops one per line, the form ParseTrace reads.
func FormatTrace(ops []Op) string {
	var b strings.Builder
	for _, o := range ops {
		b.WriteString(o.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseTrace reads ops one per line; blank lines and lines starting with '#'
// are skipped. The error names the 1-based line.
func ParseTrace(text string) ([]Op, error) {
	var ops []Op
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		o, err := ParseOp(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		ops = append(ops, o)
	}
	return ops, nil
}
