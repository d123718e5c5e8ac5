package conform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// Judgement is what the model says about a failing trace: the invariants
// the implementation broke and the design variant of the catalog whose
// model behaves the same way on the trace.
type Judgement struct {
	Invariants []spec.InvariantID
	// Closest is the variant whose model gives the implementation's result
	// at the failing step (for a SIGBUS, whose model cuts a mapping on the
	// trace); "" when none does.
	Closest string
}

// judge replays tr under every design of the catalog. The failing op is
// the last of tr.Ops; fault is the run's error.
func judge(tr sim.Trace, fault error) Judgement {
	if len(tr.Ops) == 0 {
		return Judgement{}
	}
	var div *sim.DivergenceError
	if !isSIGBUS(fault) && !errors.As(fault, &div) {
		return Judgement{}
	}
	// A bus error, or a truncation in place that would cause one in any
	// process mapping the file, is judged by I8 along the whole trace.
	sigbus := div == nil || div.What == "truncation"
	k := len(tr.Ops) - 1
	var j Judgement
	for _, d := range model.Designs() {
		if d.Name == "reference" {
			continue
		}
		outs, err := model.Replay(&d, tr.Bounds, tr.Ops)
		if err != nil {
			continue
		}
		if sigbus {
			if cuts(tr.Bounds, outs) {
				return Judgement{Invariants: []spec.InvariantID{spec.InvNoSIGBUS}, Closest: d.Name}
			}
			continue
		}
		switch div.What {
		case "result":
			if !sameResult(outs[k].Result, tr.Observed) {
				continue
			}
		case "file":
			// The committed index the variant's model leaves is the one
			// the implementation wrote.
			if sim.DescribeDisk(tr.Bounds, outs[k].Next.Disk) != div.Cache {
				continue
			}
		default:
			continue
		}
		prev := model.Init(tr.Bounds)
		if k > 0 {
			prev = outs[k-1].Next
		}
		ids := model.Check(tr.Bounds, model.Transition{Prev: &prev, Out: &outs[k]})
		if j.Closest == "" || (len(j.Invariants) == 0 && len(ids) > 0) {
			// What the variant's model breaks at this step, and the bug
			// the catalog knows the variant for (which may show only
			// later in the trace, as a launch that does not converge).
			for _, id := range d.Expect {
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
			j = Judgement{Invariants: ids, Closest: d.Name}
		}
	}
	if sigbus {
		return Judgement{Invariants: []spec.InvariantID{spec.InvNoSIGBUS}}
	}
	if j.Closest != "" {
		return j
	}
	// No variant behaves so: hold the implementation's own result to the
	// reference's invariants.
	ref, _ := model.DesignByName("reference")
	outs, err := model.Replay(&ref, tr.Bounds, tr.Ops)
	if err != nil {
		return Judgement{}
	}
	prev := model.Init(tr.Bounds)
	if k > 0 {
		prev = outs[k-1].Next
	}
	out := outs[k]
	if div.What != "result" {
		return Judgement{}
	}
	out.Result = tr.Observed
	return Judgement{Invariants: model.Check(tr.Bounds, model.Transition{Prev: &prev, Out: &out})}
}

// sameResult compares a model's result with an implementation's as the
// lockstep runner does: the bytes of a miss and the history bit LateCorrupt
// do not count, and the model's reason "design" (a word for a variant's
// own choice) is no reason an implementation reports.
func sameResult(m, got spec.Result) bool {
	norm := func(r spec.Result) spec.Result {
		r.Bytes.LateCorrupt = false
		if !r.Hit {
			r.Bytes = spec.Packing{}
		}
		if r.Reason == spec.ReasonDesign {
			r.Reason = spec.ReasonNone
		}
		return r
	}
	return norm(m) == norm(got)
}

// cuts reports whether a transition of the replay breaks I8.
func cuts(b model.Bounds, outs []model.Outcome) bool {
	prev := model.Init(b)
	for i := range outs {
		for _, id := range model.Check(b, model.Transition{Prev: &prev, Out: &outs[i]}) {
			if id == spec.InvNoSIGBUS {
				return true
			}
		}
		prev = outs[i].Next
	}
	return false
}

// isSIGBUS reports an adapter that died of a bus error: what a process
// takes when a file it maps is truncated under it (I8).
func isSIGBUS(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe) && pe.Kind == FaultExit &&
		(strings.Contains(pe.Msg, "SIGBUS") || strings.Contains(pe.Msg, "bus error"))
}

// shrinkAndJudge shrinks a failing trace (same failure signature, every
// candidate valid under the reference model), judges the shortest one and
// writes it as a scenario file into dir ("" writes none).
func shrinkAndJudge(o Options, name string, tr sim.Trace, failure error) (Judgement, int, string) {
	ref, _ := model.DesignByName("reference")
	sig := signature(failure)
	valid := func(ops []spec.Op) bool { return sim.Replayable(ref, tr.Bounds, ops) }
	var last sim.Trace
	var lastErr error
	fails := func(ops []spec.Op) bool {
		t, err := o.runOps(tr.Bounds, ops)
		if err != nil && signature(err) == sig {
			last, lastErr = t, err
			return true
		}
		return false
	}
	shrunk := sim.Shrink(tr.Ops, valid, fails)
	if len(shrunk) < len(tr.Ops) && fails(shrunk) {
		tr, failure = last, lastErr
	}
	j := judge(tr, failure)
	file := ""
	if o.OutDir != "" {
		var ids []string
		for _, id := range j.Invariants {
			ids = append(ids, string(id))
		}
		hdr := []string{
			fmt.Sprintf("Conformance failure of adapter %q, shrunk from %s to %d ops.", o.Command.String(), name, len(tr.Ops)),
			"Breaks: " + strings.Join(ids, ", ") + "; closest design variant: " + orNone(j.Closest) + ".",
			"Rerun: simrun replay --exec '" + o.Command.String() + "' FILE",
		}
		if text, err := sim.FormatScenario(hdr, "", tr.Bounds, tr.Ops); err == nil {
			file = filepath.Join(o.OutDir, fileName(name))
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				file = ""
			}
		}
	}
	return j, len(tr.Ops), file
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// signature is sim.Signature, with protocol faults by kind.
func signature(err error) string {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		if isSIGBUS(err) {
			return "fault/sigbus"
		}
		return "fault/" + pe.Kind
	}
	return sim.Signature(err)
}

func fileName(name string) string {
	r := strings.NewReplacer("/", "-", " ", "-", "=", "-", "(", "", ")", "")
	return "conform-" + r.Replace(name)
}
