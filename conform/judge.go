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

// Finding is one invariant the implementation's observed behaviour broke
// at the failing step, and why, in one line.
type Finding struct {
	ID  spec.InvariantID `json:"id"`
	Why string           `json:"why"`
}

// Judgement is what the model says about a failing trace. Evidence is
// what the trace shows: the reference's invariant checks evaluated on the
// implementation's own result at the failing step, and the file checks.
// Like is apart from it: the design of the catalog whose model behaves the
// same way on the trace, with the invariants that model breaks on it.
type Judgement struct {
	Evidence []Finding
	// Like is the design whose model gives the implementation's result at
	// the failing step (for a truncation in place, or a SIGBUS, whose model
	// cuts a mapping on the trace); "" when none does.
	Like       string
	LikeBreaks []spec.InvariantID
	// Uncovered, when no invariant covers the divergence, says so: a
	// finding about the spec, and a reason to extend it.
	Uncovered string
}

// IDs lists the invariants of the evidence.
func (j Judgement) IDs() []spec.InvariantID {
	var out []spec.InvariantID
	for _, f := range j.Evidence {
		if !slices.Contains(out, f.ID) {
			out = append(out, f.ID)
		}
	}
	return out
}

// judge judges a failing trace. The failing op is the last of tr.Ops;
// fault is the run's error; checksums is whether the adapter claims to
// check data (otherwise it is not held to I13).
func judge(tr sim.Trace, fault error, checksums bool) Judgement {
	if len(tr.Ops) == 0 {
		return Judgement{}
	}
	var div *sim.DivergenceError
	bus := isSIGBUS(fault)
	if f, ok := unparsedAtForeign(tr, fault); ok {
		return Judgement{Evidence: []Finding{f}}
	}
	if !bus && !errors.As(fault, &div) {
		return Judgement{}
	}
	j := Judgement{Evidence: evidence(tr, div, bus, checksums)}
	j.Like, j.LikeBreaks = behavesLike(tr, div, bus)
	if len(j.Evidence) == 0 && div != nil {
		j.Uncovered = fmt.Sprintf("no invariant covers this divergence (%s: model %s, cache %s): a finding about the spec",
			div.What, div.Model, div.Cache)
	}
	return j
}

// evidence is what the implementation's observed results and file break
// at the failing step k, held to the reference's checks.
func evidence(tr sim.Trace, div *sim.DivergenceError, bus, checksums bool) []Finding {
	var out []Finding
	add := func(id spec.InvariantID, why string) {
		for _, f := range out {
			if f.ID == id {
				return
			}
		}
		out = append(out, Finding{ID: id, Why: why})
	}
	if bus {
		add(spec.InvNoSIGBUS, "the adapter died of a bus error: a file it mapped was cut under it")
	}
	if div == nil {
		return out
	}
	// The design the run held the cache to: the reference, or the
	// reference under the on-compute policy.
	ref, err := model.DesignByName(tr.Design)
	if err != nil {
		ref, _ = model.DesignByName("reference")
	}
	outs, err := model.Replay(&ref, tr.Bounds, tr.Ops)
	k := len(tr.Ops) - 1
	if err == nil && len(outs) == len(tr.Ops) {
		prev := model.Init(tr.Bounds)
		if k > 0 {
			prev = outs[k-1].Next
		}
		mine := outs[k]
		want := mine.Result
		op := mine.Op
		if _, ok := div.Find("result"); ok {
			mine.Result = tr.Observed
		}
		got := mine.Result
		for _, id := range model.Check(tr.Bounds, model.Transition{Prev: &prev, Out: &mine}) {
			if id != spec.InvNoUncheckedUse { // read from the model's state, not the result: below
				add(id, why(id, op, want, got))
			}
		}
		if checksums && op.Kind == spec.OpLookUp && got.Hit && !got.Checked && mine.Events&model.EvtUncheckedHandle == 0 &&
			!prev.Procs[op.Proc].Ents[op.Name].Verified {
			add(spec.InvNoUncheckedUse, fmt.Sprintf("%s handed out bytes this instance neither packed nor checked (the cache claims checksums)", op))
		}
		if checksums && op.Kind == spec.OpCompute && want.Checked && !got.Checked && !got.Failed {
			add(spec.InvNoUncheckedUse, fmt.Sprintf("%s computed from bytes this instance neither packed nor checked (the cache claims checksums)", op))
		}
		if f, ok := heapRepack(op, want, got, prev.Procs[op.Proc].LoadFlag); ok {
			add(f.ID, f.Why)
		}
		if op.Kind == spec.OpInit && want.Load == spec.LoadOK && refused(got.Load) && prev.GhostValid {
			add(spec.InvCommitSurvives, fmt.Sprintf("%s found load=%s where the last commit left a loadable index (model: load=ok)", op, got.Load))
		}
		if f, ok := div.Find("file"); ok && prev.GhostValid {
			// The commit before this step, which the file must still hold
			// (a commit the model makes at this step and the cache does not
			// is the result's divergence, not a lost commit).
			if last := sim.DescribeDisk(tr.Bounds, prev.Disk); lostCommit(last, f.Cache) {
				add(spec.InvCommitSurvives, fmt.Sprintf("after %s the file's committed index is %q, the last commit left %q", op, f.Cache, last))
			}
		}
	}
	if t, ok := div.Find("truncation"); ok {
		add(spec.InvNoSIGBUS, fmt.Sprintf("%s %s: a process mapping the cut bytes takes SIGBUS", div.Op, t.Cache))
	}
	if m, ok := div.Find("mappings"); ok {
		add(spec.InvMapOnce, fmt.Sprintf("after %s the process holds %s (stats): the same packed bytes resident more than once", div.Op, m.Cache))
	}
	return out
}

// heapRepack judges a reservation the reference places in the file and
// the cache on the heap, with no reason the reference also allows (a busy
// lock, no path): a heap packing is never persisted, so the launch after
// this one misses it and packs it again (I4). loaded is whether the
// process's instance loaded the file, as ExecuTorch's loaded_from_disk_
// instance does before it sends every re-pack to the heap.
func heapRepack(op spec.Op, want, got spec.Result, loaded bool) (Finding, bool) {
	if op.Kind != spec.OpReserve || want.Place != spec.PlaceFile || got.Place != spec.PlaceHeap {
		return Finding{}, false
	}
	if got.Reason == spec.ReasonLockBusy || got.Reason == spec.ReasonNoPath {
		return Finding{}, false
	}
	what := "the packing on the heap with no reason the reference allows"
	if loaded {
		what = "the re-pack on the heap after a load"
	}
	return Finding{ID: spec.InvConverge, Why: fmt.Sprintf("%s placed %s: nothing will persist it, so the next launch misses again", op, what)}, true
}

// unparsedAtForeign judges a foreign writer that found no index in the
// file (v3 or v2) where the model's last commit is loadable: a new process
// would load none there either (I3).
func unparsedAtForeign(tr sim.Trace, fault error) (Finding, bool) {
	var h *sim.HarnessError
	if !errors.As(fault, &h) || h.Op.Kind != spec.EvForeign || !strings.Contains(h.Msg, "does not parse") {
		return Finding{}, false
	}
	ref, err := model.DesignByName(tr.Design)
	if err != nil {
		ref, _ = model.DesignByName("reference")
	}
	// The state before the foreign write, the trace's last op.
	outs, err := model.Replay(&ref, tr.Bounds, tr.Ops)
	if err != nil || len(outs) < 2 {
		return Finding{}, false
	}
	st := outs[len(outs)-2].Next
	if !st.GhostValid || st.Disk.State != model.DiskValid {
		return Finding{}, false
	}
	return Finding{ID: spec.InvCommitSurvives, Why: fmt.Sprintf("before %s the file has no loadable index (%s), where the last commit left %s",
		h.Op, h.Msg, sim.DescribeDisk(tr.Bounds, st.Disk))}, true
}

// refused reports a load outcome that turns the committed index away (a
// busy lock does not: the file keeps it, G8).
func refused(l spec.LoadOutcome) bool {
	switch l {
	case spec.LoadMissing, spec.LoadRejected, spec.LoadOtherFormat, spec.LoadFailed:
		return true
	}
	return false
}

// lostCommit reports whether the file described as have lacks a record of
// the committed index described as want (sim.DescribeDisk's words): the
// last commit is not what a new process would load.
func lostCommit(want, have string) bool {
	if !strings.HasPrefix(want, "valid ") {
		return false
	}
	// Bytes a foreign write changed ("!") are another guarantee's.
	have, want = strings.ReplaceAll(have, "!", ""), strings.ReplaceAll(want, "!", "")
	got := strings.Fields(strings.TrimPrefix(have, "valid "))
	for _, rec := range strings.Fields(strings.TrimPrefix(want, "valid ")) {
		if strings.HasSuffix(rec, "=-") || strings.HasSuffix(rec, "=0") {
			continue // an empty record
		}
		if !strings.HasPrefix(have, "valid ") || !slices.Contains(got, rec) {
			return true
		}
	}
	return false
}

// why says in one line why the result got of op breaks invariant id, where
// the reference gives want.
func why(id spec.InvariantID, op spec.Op, want, got spec.Result) string {
	w, g := sim.DescribeResult(op, want), sim.DescribeResult(op, got)
	switch id {
	case spec.InvNoStaleHit:
		return fmt.Sprintf("%s: %s, a packing of another kernel or source than the process runs (model: %s)", op, g, w)
	case spec.InvNoCorruptHit:
		return fmt.Sprintf("%s: %s, bytes that differ from what was packed (model: %s)", op, g, w)
	case spec.InvConverge:
		return fmt.Sprintf("%s: %s in a launch owed convergence (model: %s)", op, g, w)
	case spec.InvNoIdleWrite:
		return fmt.Sprintf("%s: %s with nothing new to commit (model: %s)", op, g, w)
	case spec.InvOptionsOwned:
		return fmt.Sprintf("%s: %s, not the placement the module's own options ask (model: %s)", op, g, w)
	case spec.InvLoadTotal:
		return fmt.Sprintf("%s: %s, an init that fails (model: %s)", op, g, w)
	case spec.InvFallbackNoError:
		return fmt.Sprintf("%s: %s, a failure of the packing path (model: %s)", op, g, w)
	}
	return fmt.Sprintf("%s: %s (model: %s)", op, g, w)
}

// behavesLike replays tr under every design of the catalog but the
// reference, trying every crash branch each allows, and returns the design
// whose model gives the implementation's result at the failing step (for
// a truncation in place or a bus error, whose model cuts a mapping on the
// trace) and at the most other steps, with the invariants that model
// breaks along the trace.
func behavesLike(tr sim.Trace, div *sim.DivergenceError, bus bool) (string, []spec.InvariantID) {
	cut := bus
	if div != nil {
		_, cut = div.Find("truncation")
		cut = cut || bus
	}
	k := len(tr.Ops) - 1
	// The verification policy the run held the cache to (on-compute or
	// at first use): on a tie, a design of the same policy is preferred.
	run, _ := model.DesignByName(tr.Design)
	best, bestScore, bestIDs := "", -1, []spec.InvariantID(nil)
	bestPolicy := false
	for _, d := range model.Designs() {
		if d.Name == "reference" {
			continue
		}
		for _, outs := range replays(&d, tr.Bounds, tr.Ops) {
			ids := broken(tr.Bounds, outs)
			switch {
			case cut:
				if !slices.Contains(ids, spec.InvNoSIGBUS) {
					continue
				}
			case div.What == "result":
				if !sameResult(outs[k].Result, tr.Observed) {
					continue
				}
			case div.What == "file":
				if sim.DescribeDisk(tr.Bounds, outs[k].Next.Disk) != div.Cache {
					continue
				}
			case div.What == "mappings":
				if !mapsTwice(&outs[k].Next, tr.Ops[k].Proc) {
					continue
				}
			default:
				continue
			}
			score := 0
			for i := 0; i < k && i < len(tr.Results); i++ {
				if sameResult(outs[i].Result, tr.Results[i]) {
					score++
				}
			}
			policy := d.CheckAtCompute == run.CheckAtCompute
			better := score > bestScore ||
				score == bestScore && len(bestIDs) == 0 && len(ids) > 0 ||
				score == bestScore && len(ids) > 0 && policy && !bestPolicy
			if better {
				best, bestScore, bestIDs, bestPolicy = d.Name, score, ids, policy
			}
		}
	}
	return best, bestIDs
}

// mapsTwice reports whether process p of st maps an entry more than once
// (the model's side of I7).
func mapsTwice(st *model.State, p spec.Proc) bool {
	if int(p) >= len(st.Procs) {
		return false
	}
	for _, e := range st.Procs[p].Ents {
		if e.Maps > 1 {
			return true
		}
	}
	return false
}

// replays runs ops under d, every way d's crash branches allow: the
// branch an op names is the reference's choice, and a design may offer
// others at a crash (a design without a commit point has no mid-save of
// the reference's kind, and may have another). Replays that d does not
// enable are dropped; at most a few dozen are tried.
func replays(d *model.Design, b model.Bounds, ops []spec.Op) [][]model.Outcome {
	const maxRuns = 64
	type run struct {
		st   model.State
		outs []model.Outcome
	}
	runs := []run{{st: model.Init(b)}}
	for _, op := range ops {
		var next []run
		for _, r := range runs {
			cands := model.Step(d, b, r.st, op)
			if op.Kind == spec.EvCrash && len(cands) != 1 {
				free := op
				free.Branch = spec.BranchNone
				cands = model.Step(d, b, r.st, free)
			}
			for _, o := range cands {
				if len(next) == maxRuns {
					break
				}
				next = append(next, run{st: o.Next, outs: append(slices.Clone(r.outs), o)})
			}
		}
		if runs = next; len(runs) == 0 {
			return nil
		}
	}
	out := make([][]model.Outcome, len(runs))
	for i := range runs {
		out[i] = runs[i].outs
	}
	return out
}

// broken lists the invariants a replay breaks along its transitions.
func broken(b model.Bounds, outs []model.Outcome) []spec.InvariantID {
	var ids []spec.InvariantID
	prev := model.Init(b)
	for i := range outs {
		for _, id := range model.Check(b, model.Transition{Prev: &prev, Out: &outs[i]}) {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		prev = outs[i].Next
	}
	return ids
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

// isSIGBUS reports an adapter that died of a bus error: what a process
// takes when a file it maps is truncated under it (I8).
func isSIGBUS(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe) && pe.Kind == FaultExit &&
		(strings.Contains(pe.Msg, "SIGBUS") || strings.Contains(pe.Msg, "bus error"))
}

// shrinkAndJudge shrinks a failing trace (same failure signature, every
// candidate valid under the reference model), judges the shortest one and
// writes it as a scenario file into dir ("" writes none). It returns the
// shrunk run's failure, whose step numbers are the shrunk trace's.
func shrinkAndJudge(o Options, name string, tr sim.Trace, failure error) (Judgement, int, string, error, error) {
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
	j := judge(tr, failure, o.hello.Claims(CapChecksums))
	if o.OutDir == "" {
		return j, len(tr.Ops), "", failure, nil
	}
	var ids []string
	for _, id := range j.IDs() {
		ids = append(ids, string(id))
	}
	hdr := []string{
		fmt.Sprintf("Conformance failure of adapter %q, shrunk from %s to %d ops.", o.Command.String(), name, len(tr.Ops)),
		"Breaks: " + orNone(strings.Join(ids, ", ")) + "; behaves like design: " + orNone(j.Like) + ".",
		"Rerun: simrun replay --exec '" + o.Command.String() + "' FILE",
	}
	text, err := sim.FormatScenario(hdr, tr.Design, tr.Bounds, tr.Ops)
	if err != nil {
		return j, len(tr.Ops), "", failure, err
	}
	file := filepath.Join(o.OutDir, fileName(name))
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return j, len(tr.Ops), "", failure, err
	}
	return j, len(tr.Ops), file, failure, nil
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
