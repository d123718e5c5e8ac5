package explore

import (
	"fmt"
	"strings"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// Mermaid draws a counterexample as a Mermaid sequence diagram: the
// processes, the cache file and the environment as lifelines, one message
// per op (to the file when the op read or wrote it), the last op marked as
// the step that breaks inv. A lasso (cycleFrom ≥ 0) draws its ops from
// cycleFrom on inside a loop box, the behaviour that repeats forever.
func Mermaid(d *model.Design, b model.Bounds, ops []spec.Op, cycleFrom int, inv spec.InvariantID) (string, error) {
	outs, err := model.Replay(d, b, ops)
	if err != nil {
		return "", err
	}
	var w strings.Builder
	w.WriteString("sequenceDiagram\n")
	for p := range b.Procs {
		fmt.Fprintf(&w, "    participant %s as process %s\n", spec.Proc(p), spec.Proc(p))
	}
	w.WriteString("    participant F as cache file\n    participant E as environment\n")
	guarantee := ""
	if i, ok := spec.InvariantByID(inv); ok {
		guarantee = string(i.Guarantee)
	}
	for k, o := range outs {
		if k == cycleFrom {
			fmt.Fprintf(&w, "    loop forever: no launch hits everything (%s, %s)\n", inv, guarantee)
		}
		last := k == len(outs)-1 && cycleFrom < 0
		if last {
			w.WriteString("    rect rgb(255, 210, 210)\n")
		}
		fmt.Fprintf(&w, "    %s\n", message(o))
		if last {
			fmt.Fprintf(&w, "    Note over %s: breaks %s (%s)\n", span(o.Op, b), inv, guarantee)
			w.WriteString("    end\n")
		}
	}
	if cycleFrom >= 0 && cycleFrom < len(outs) {
		w.WriteString("    end\n")
	}
	return w.String(), nil
}

// message is one op as an arrow: from the process (or the environment) to
// the file when it touched the file, to itself otherwise.
func message(o model.Outcome) string {
	op, r := o.Op, o.Result
	p := op.Proc.String()
	text := strings.TrimPrefix(op.String(), op.Kind.String()+" ")
	text = strings.NewReplacer("proc="+p+" ", "", "proc="+p, "").Replace(text)
	verb := op.Kind.String()
	label := strings.TrimSpace(verb + " " + text)
	switch op.Kind {
	case spec.OpInit:
		if r.Load != spec.LoadNone {
			return fmt.Sprintf("%s->>F: %s: load %s, %s", p, label, r.Load, place(r.Place))
		}
		return fmt.Sprintf("%s->>%s: %s: %s", p, p, label, place(r.Place))
	case spec.OpLookUp:
		if r.Hit {
			return fmt.Sprintf("%s->>%s: %s: hit", p, p, label)
		}
		return fmt.Sprintf("%s->>%s: %s: miss", p, p, label)
	case spec.OpReserve, spec.OpInsert:
		if r.Place == spec.PlaceFile || (op.Kind == spec.OpInsert && o.Next.Procs[op.Proc].Ents[op.Name].Status == spec.EntryAppended) {
			return fmt.Sprintf("%s->>F: %s: file", p, label)
		}
		if r.Reason != spec.ReasonNone {
			return fmt.Sprintf("%s->>%s: %s: heap (%s)", p, p, label, reason(r.Reason))
		}
		return fmt.Sprintf("%s->>%s: %s", p, p, label)
	case spec.OpFinalize, spec.OpSave, spec.OpInvalidate, spec.OpCompute:
		if r.Wrote {
			return fmt.Sprintf("%s->>F: %s: commit", p, label)
		}
		return fmt.Sprintf("%s->>%s: %s: writes nothing", p, p, label)
	case spec.OpUnload, spec.OpDestroy:
		return fmt.Sprintf("%s->>%s: %s", p, p, label)
	case spec.EvCrash:
		if op.Crash == spec.CrashPower {
			return "E-xF: " + op.String()
		}
		return fmt.Sprintf("E-x%s: %s", p, op.String())
	case spec.EvRestart, spec.EvClobberOptions:
		return fmt.Sprintf("E->>%s: %s", p, op.String())
	case spec.EvForeign:
		return "E-xF: " + op.String()
	}
	return "E->>E: " + op.String()
}

// span is the lifelines a note on op's step covers.
func span(op spec.Op, b model.Bounds) string {
	if model.TakesProc(op) {
		return op.Proc.String() + ",F"
	}
	return "E,F"
}

func place(p spec.Placement) string {
	if p == spec.PlaceFile {
		return "file"
	}
	return "heap"
}

func reason(r spec.Reason) string {
	switch r {
	case spec.ReasonLockBusy:
		return "lock busy"
	case spec.ReasonNoPath:
		return "no path"
	case spec.ReasonDesign:
		return "design"
	}
	return "none"
}
