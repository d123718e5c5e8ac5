package conform

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/model/explore"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// Verdicts of a scenario, a guarantee or an invariant.
const (
	Holds      = "holds"       // every run that checks it passed
	Broken     = "broken"      // a run found the implementation breaking it
	NotClaimed = "not claimed" // it needs a capability the adapter does not claim
	Skipped    = "skipped"     // it cannot run through the protocol (see Reason)
	Fault      = "fault"       // the adapter broke the protocol
)

// ScenarioResult is the verdict on one scenario file, walk or trace.
type ScenarioResult struct {
	Name    string   `json:"name"`
	Verdict string   `json:"verdict"`
	Cites   []string `json:"cites,omitempty"`   // guarantee and invariant IDs its header cites
	Needs   []string `json:"needs,omitempty"`   // capabilities it needs
	Missing []string `json:"missing,omitempty"` // of those, not claimed
	Reason  string   `json:"reason,omitempty"`  // why it failed or was skipped
	// Steps is how many lifecycle steps ran; Of, when the run was cut
	// before its first step that needs a capability not claimed, how
	// many it has (a cut run that holds holds for its Steps only).
	Steps int `json:"steps,omitempty"`
	Of    int `json:"of,omitempty"`
	// For a broken one: the guarantees and invariants the implementation's
	// observed behaviour broke at the failing step of the shrunk trace
	// (Evidence says why, one line each; Uncovered when no invariant
	// covers the divergence), the design of the catalog whose model
	// behaves the same there and what that model breaks on the trace, the
	// shrunk trace's length and the scenario file it was written to
	// (Options.OutDir).
	Broke      []string  `json:"broke,omitempty"`
	Evidence   []Finding `json:"evidence,omitempty"`
	Uncovered  string    `json:"uncovered,omitempty"`
	Like       string    `json:"behaves_like,omitempty"`
	LikeBreaks []string  `json:"like_breaks,omitempty"`
	Shrunk     int       `json:"shrunk,omitempty"`
	File       string    `json:"file,omitempty"`
}

// Cut reports whether the run stopped before the end of its ops because
// the next needs a capability the adapter does not claim.
func (s *ScenarioResult) Cut() bool { return s.Of > s.Steps }

// Report is the outcome of a conformance run.
type Report struct {
	Adapter   Hello            `json:"adapter"`
	Scenarios []ScenarioResult `json:"scenarios"`
	// Checks is the verdict per guarantee and invariant ID, in ID order.
	Checks []Check `json:"checks"`
}

// Check is one guarantee's or invariant's verdict and the scenarios behind it.
type Check struct {
	ID      string   `json:"id"`
	Verdict string   `json:"verdict"`
	By      []string `json:"by,omitempty"` // scenarios that broke it, or that hold it
}

// OK reports whether nothing broke and the adapter kept the protocol.
func (r *Report) OK() bool {
	for _, s := range r.Scenarios {
		if s.Verdict == Broken || s.Verdict == Fault {
			return false
		}
	}
	return true
}

// Options configure Run.
type Options struct {
	Command Command
	// Scenarios to run; nil is the embedded suite (sim.Scenarios).
	Scenarios []sim.File
	// Trace receives each run's step-by-step account (sim.Config.Trace).
	Trace io.Writer
	// OutDir receives each broken run's shrunk trace as a scenario file;
	// "" writes none.
	OutDir string
	// Explore runs, for each design variant of the catalog, the shortest
	// trace the explorer finds to each invariant the variant is known to
	// break, held to the reference.
	Explore bool
	// Walks model-guided random walks of Steps ops each (seeded Seed,
	// Seed+1, …) run after the scenarios, over Names names.
	Walks, Steps, Names int
	Seed                uint64
	hello               Hello // the adapter's, once Run read it
	_                   struct{}
}

// config is the lockstep runner's configuration for one run in dir.
func (o Options) config(dir string) sim.Config {
	cfg := ReplayConfig(o.Command, o.hello)
	cfg.Dir, cfg.Trace = dir, o.Trace
	return cfg
}

// ReplayConfig is the lockstep configuration of a run through the adapter
// c, which said h in its hello: its file is held to the model's committed
// index only when it claims format-v3 (then after every step), and
// whether a look-up checked only when it claims checksums. simrun replay
// --exec runs a trace with it, as conform ran it.
func ReplayConfig(c Command, h Hello) sim.Config {
	v3 := h.Claims(CapFormatV3)
	return sim.Config{Backend: sim.BackendOS, Open: Opener(c, nil),
		OpaqueFile: !v3, FileEachStep: v3, AdoptCompaction: true, Unchecked: !h.Claims(CapChecksums)}
}

// ErrOutDir is returned (wrapped) by Run when Options.OutDir is not a
// directory it can write the shrunk traces into.
var ErrOutDir = errors.New("conform: the output directory")

// runOps runs ops through the adapter in lockstep with the reference
// model, on a cache file in a fresh temporary directory.
func (o Options) runOps(b model.Bounds, ops []spec.Op) (sim.Trace, error) {
	dir, err := os.MkdirTemp("", "xpwc-conform-")
	if err != nil {
		return sim.Trace{}, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	cfg := o.config(dir)
	return sim.RunOpsTrace(cfg, "", b, append([]spec.Op(nil), ops...))
}

// Run starts the adapter once to read its hello, then replays every
// scenario it can through it, one adapter process per abstract process,
// on a cache file in a fresh temporary directory per scenario.
func Run(o Options) (*Report, error) {
	if o.OutDir != "" {
		if fi, err := os.Stat(o.OutDir); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOutDir, err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("%w %s is not a directory", ErrOutDir, o.OutDir)
		}
	}
	files := o.Scenarios
	if files == nil {
		var err error
		if files, err = sim.Scenarios(); err != nil {
			return nil, err
		}
	}
	cl, err := Start(o.Command)
	if err != nil {
		return nil, err
	}
	rep := &Report{Adapter: cl.Hello()}
	o.hello = rep.Adapter
	_ = cl.Close()
	for _, f := range files {
		rep.Scenarios = append(rep.Scenarios, runScenario(o, rep.Adapter, f))
		if b, ops, ok := variantTrace(f); ok {
			// A design variant's trace (the explorer's shortest, as its
			// scenario file keeps it), held to the reference: the run an
			// implementation with that variant's bug fails.
			rep.Scenarios = append(rep.Scenarios, runTrace(o, rep.Adapter, f.Name+" (as reference)", b, ops))
		}
	}
	if o.Explore {
		rs, err := exploreTraces(o, rep.Adapter)
		if err != nil {
			return nil, err
		}
		rep.Scenarios = append(rep.Scenarios, rs...)
	}
	for i := 0; i < o.Walks; i++ {
		rep.Scenarios = append(rep.Scenarios, runWalk(o, rep.Adapter, o.Seed+uint64(i)))
	}
	rep.Checks = checks(rep.Scenarios)
	return rep, nil
}

func runScenario(o Options, h Hello, f sim.File) ScenarioResult {
	res := ScenarioResult{Name: f.Name, Cites: cites(f.Text)}
	backends, err := sim.Backends(f.Text)
	if err != nil {
		res.Verdict, res.Reason = Skipped, err.Error()
		return res
	}
	if readsAfterFinalize(f.Text) && h.Protocol < 2 {
		res.Verdict = Skipped
		res.Reason = "protocol 1 has no operation for an inference's read after finalize (compute), where the on-compute policy checks and re-packs"
		return res
	}
	if !slices.Contains(backends, sim.BackendOS) {
		res.Verdict = Skipped
		res.Reason = "needs a simulated power loss (crashfs), which a process on the OS filesystem cannot suffer"
		if slices.Equal(backends, []sim.Backend{sim.BackendModel}) {
			res.Reason = "a design variant: runs on the model alone"
		}
		return res
	}
	p, err := prepare(f.Text, h)
	if err != nil {
		res.Verdict, res.Reason = Skipped, err.Error()
		return res
	}
	res.Needs, res.Missing = p.needs, p.missing
	if p.kept == 0 {
		// Not one step runs before the first that needs more than the
		// adapter claims.
		res.Verdict = NotClaimed
		return res
	}
	text := p.text
	dir, err := os.MkdirTemp("", "xpwc-conform-")
	if err != nil {
		res.Verdict, res.Reason = Fault, err.Error()
		return res
	}
	defer func() { _ = os.RemoveAll(dir) }()
	r := sim.RunScenario(sim.File{Name: f.Name, Text: text}, o.config(dir))
	// Outputs that differ from the file's are not findings: the expected
	// output is the model's, and differs where the model adopted the
	// adapter's compaction decision; a divergence is r.Err.
	res.Steps = r.Steps
	if p.kept < p.ops {
		res.Of = p.ops
	}
	res.verdict(o, r.Trace, r.Err)
	if res.Cut() {
		res.Of = p.ops
	}
	return res
}

// readsAfterFinalize reports whether a scenario runs the design on-compute
// or reads entries after finalize (compute), for which the protocol has no
// operation.
func readsAfterFinalize(text string) bool {
	ds, err := sim.ParseScenario(text)
	if err != nil {
		return false
	}
	for _, d := range ds {
		f := strings.Fields(d.Text)
		if f[0] == spec.OpCompute.String() || f[0] == "design" && slices.Contains(f[1:], "name=on-compute") {
			return true
		}
	}
	return false
}

// verdict turns a run's error into res's verdict: a protocol fault, a
// divergence on a capability the adapter does not claim, or a failure the
// model judges.
func (res *ScenarioResult) verdict(o Options, tr sim.Trace, err error) {
	switch {
	case err == nil:
		res.Verdict = Holds
	case errors.Is(err, sim.ErrNotSupported):
		// The adapter does not have the operation: not claimed from
		// that step on; the steps before it held.
		res.Steps = max(len(tr.Ops)-1, 0)
		res.Of = max(res.Of, res.Steps+1)
		res.Missing, res.Reason = append(res.Missing, "op "+tr.Ops[len(tr.Ops)-1].Kind.String()), err.Error()
		res.Verdict = Holds
		if res.Steps == 0 {
			res.Verdict = NotClaimed
		}
	case errors.Is(err, sim.ErrImplementation) && !isSIGBUS(err):
		res.Verdict, res.Reason = Fault, err.Error()
	case !o.hello.Claims(CapCompaction) && strings.HasPrefix(sim.Signature(err), "divergence/compaction"):
		// The model's garbage bound called for a rewrite the adapter does
		// not claim to make (G4).
		res.Verdict, res.Reason, res.Missing = NotClaimed, err.Error(), []string{CapCompaction}
	default:
		res.Verdict, res.Reason = Broken, err.Error()
		res.broken(o, tr, err)
	}
}

// broken shrinks and judges a failing trace into res. The reason is the
// shrunk run's failure, so its step numbers are the shrunk trace's.
func (res *ScenarioResult) broken(o Options, tr sim.Trace, err error) {
	j, n, file, failure, werr := shrinkAndJudge(o, res.Name, tr, err)
	res.Reason = failure.Error()
	if werr != nil {
		res.Reason += "\n(the shrunk trace was not written: " + werr.Error() + ")"
	}
	res.Like, res.Shrunk, res.File = j.Like, n, file
	res.Evidence, res.Uncovered = j.Evidence, j.Uncovered
	res.Broke = withGuarantees(j.IDs())
	for _, id := range j.LikeBreaks {
		res.LikeBreaks = append(res.LikeBreaks, string(id))
	}
	res.LikeBreaks = sortIDs(res.LikeBreaks)
}

// withGuarantees lists each invariant and its guarantee, once each, in ID
// order.
func withGuarantees(ids []spec.InvariantID) []string {
	var out []string
	for _, id := range ids {
		if inv, ok := spec.InvariantByID(id); ok && !slices.Contains(out, string(inv.Guarantee)) {
			out = append(out, string(inv.Guarantee))
		}
		if !slices.Contains(out, string(id)) {
			out = append(out, string(id))
		}
	}
	return sortIDs(out)
}

// runWalk runs one model-guided random walk.
func runWalk(o Options, h Hello, seed uint64) ScenarioResult {
	b := model.DefaultBounds()
	if o.Names > 0 {
		b.Names = o.Names
	}
	// Walk only where the adapter claims to go: one process without a
	// lock, no foreign writer without the format and checks it needs.
	if !h.Claims(CapLocking) {
		b.Procs = 1
	}
	if !h.provides(needWritableFile) || !h.Claims(CapChecksums) || !h.Claims(CapCrashSafeCommit) {
		b.Foreign = false
	}
	ref, _ := model.DesignByName("reference")
	ops := sim.Generate(seed, o.Steps, ref, b, sim.GenOptions{})
	return runTrace(o, h, fmt.Sprintf("walk seed=%d", seed), b, ops)
}

// runTrace runs ops through the adapter, cut before the first op that
// needs a capability the adapter does not claim. Commits take the
// adapter's compaction decisions (sim.RunOps).
func runTrace(o Options, h Hello, name string, b model.Bounds, ops []spec.Op) ScenarioResult {
	res := ScenarioResult{Name: name}
	total := len(ops)
	if i, missing := firstUnclaimed(h, ops); missing != nil {
		res.Of, res.Missing = total, missing
		ops = ops[:i]
	}
	if len(ops) == 0 {
		res.Verdict = NotClaimed
		return res
	}
	tr, err := o.runOps(b, ops)
	res.Steps = len(tr.Ops)
	res.verdict(o, tr, err)
	if res.Cut() {
		res.Of = total
	}
	return res
}

// firstUnclaimed is the index of the first op that needs a capability h
// does not claim, and those capabilities (nil when every op is claimed).
func firstUnclaimed(h Hello, ops []spec.Op) (int, []string) {
	for i, op := range ops {
		var missing []string
		for _, c := range needsOp(op) {
			if !h.provides(c) && !slices.Contains(missing, c) {
				missing = append(missing, c)
			}
		}
		if missing != nil {
			return i, missing
		}
	}
	return len(ops), nil
}

// exploreTraces explores each design variant until every invariant it is
// known to break is broken, and runs each shortest trace the reference
// enables through the adapter.
func exploreTraces(o Options, h Hello) ([]ScenarioResult, error) {
	ref, _ := model.DesignByName("reference")
	var out []ScenarioResult
	for _, d := range model.Designs() {
		if len(d.Expect) == 0 {
			continue
		}
		b := model.DefaultBounds()
		r, err := explore.Run(d, explore.Options{Bounds: b, StopWhenFound: d.Expect})
		if err != nil {
			return nil, err
		}
		for _, v := range r.Violations {
			if !sim.Replayable(ref, b, v.Trace) {
				continue
			}
			name := fmt.Sprintf("explore %s %s", d.Name, v.Invariant)
			out = append(out, runTrace(o, h, name, b, v.Trace))
		}
	}
	return out, nil
}

// variantTrace reads a design variant's scenario file (the explorer's
// shortest trace for its bug) as bounds and ops, to be held to the
// reference design when the reference enables them all.
func variantTrace(f sim.File) (model.Bounds, []spec.Op, bool) {
	b := model.DefaultBounds()
	ds, err := sim.ParseScenario(f.Text)
	if err != nil || len(ds) == 0 || !strings.HasPrefix(ds[0].Text, "design") {
		return b, nil, false
	}
	r, err := sim.NewRunner(sim.Config{Backend: sim.BackendModel})
	if err != nil {
		return b, nil, false
	}
	var ops []spec.Op
	for _, d := range ds[1:] {
		if strings.HasPrefix(d.Text, "bounds") {
			if _, err := r.Exec(d.Text); err != nil {
				return b, nil, false
			}
			b = r.Bounds()
			continue
		}
		if op, err := sim.ParseOpLine(d.Text); err == nil {
			ops = append(ops, op)
		}
	}
	ref, _ := model.DesignByName("reference")
	if !sim.Replayable(ref, b, ops) {
		return b, nil, false
	}
	return b, ops, true
}

// prepared is a scenario ready to run through an adapter.
type prepared struct {
	text      string   // the directives to run
	needs     []string // the capabilities the whole scenario needs
	missing   []string // of those, the ones not claimed
	ops, kept int      // lifecycle ops in the scenario, and in text
	_         struct{}
}

// prepare drops the directives that read the Go cache's own counters and
// view (stats, state), which the protocol does not carry, lists the
// capabilities the rest needs, and cuts the scenario before its first
// directive that needs a capability h does not claim: what is claimed
// runs, as far as it is claimed.
func prepare(text string, h Hello) (prepared, error) {
	var p prepared
	ds, err := sim.ParseScenario(text)
	if err != nil {
		return p, err
	}
	var b strings.Builder
	need := map[string]bool{}
	cut := false
	for _, d := range ds {
		f := strings.Fields(d.Text)
		var dn []string
		switch f[0] {
		case "stats", "state":
			continue
		case "design":
			if slices.Contains(f[1:], "name=on-compute") {
				dn = append(dn, CapOnCompute) // held to the on-compute policy
			}
		case "file":
			// Compared only in format-v3 (Config.OpaqueFile otherwise),
			// so it cuts nothing.
			need[CapFormatV3] = true
		}
		op, err := sim.ParseOpLine(d.Text)
		isOp := err == nil
		if isOp {
			dn = append(dn, needsOp(op)...)
			p.ops++
		}
		for _, c := range dn {
			need[c] = true
			if !h.provides(c) && !cut {
				cut = true
			}
		}
		if cut {
			continue
		}
		if isOp {
			p.kept++
		}
		// The double-separator form keeps blank lines of the output.
		fmt.Fprintf(&b, "%s\n----\n----\n%s\n----\n----\n\n", d.Text, d.Expected)
	}
	for _, c := range append(Capabilities(), needWritableFile) {
		if need[c] {
			p.needs = append(p.needs, c)
			if !h.provides(c) {
				p.missing = append(p.missing, c)
			}
		}
	}
	p.text = b.String()
	return p, nil
}

// needWritableFile is what a foreign writer needs besides a capability:
// a file the driver can parse and write into, v3 (format-v3) or
// ExecuTorch's v2 (an adapter whose format is v2).
const needWritableFile = "a file the driver writes into (format-v3, or format v2)"

// provides reports whether h has what c names: a capability it claims, or
// a file the driver writes into.
func (h Hello) provides(c string) bool {
	if c == needWritableFile {
		return h.Claims(CapFormatV3) || h.Format == "v2"
	}
	return h.Claims(c)
}

// needsOp is what an op asks of an implementation beyond the protocol.
func needsOp(op spec.Op) []string {
	var out []string
	if op.Proc > 0 {
		out = append(out, CapLocking) // a second process on the path
	}
	switch {
	case op.Kind == spec.EvForeign && op.Foreign == spec.ForeignData:
		out = append(out, needWritableFile, CapChecksums)
	case op.Kind == spec.EvForeign:
		out = append(out, needWritableFile, CapCrashSafeCommit)
	case op.Kind == spec.EvCrash && op.Branch == spec.BranchMidSave:
		out = append(out, CapCrashSafeCommit)
	case op.Kind == spec.EvKernelUpgrade, op.Kind == spec.EvSourceChange:
		out = append(out, CapSeeds)
	case op.Branch == spec.BranchCompact:
		out = append(out, CapCompaction)
	}
	return out
}

var citeRE = regexp.MustCompile(`\b(G[1-8]|I1[0-2]|I[1-9])\b`)

// cites lists the guarantee and invariant IDs the scenario's leading
// comment names, guarantees first.
func cites(text string) []string {
	var hdr strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		hdr.WriteString(l + "\n")
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range citeRE.FindAllString(hdr.String(), -1) {
		id := fullID(m)
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return sortIDs(out)
}

func sortIDs(ids []string) []string {
	sort.Slice(ids, func(i, j int) bool { return idLess(ids[i], ids[j]) })
	return ids
}

// fullID turns I2 into the invariant's stable ID (I2-no-corrupt-hit).
func fullID(short string) string {
	for _, inv := range spec.Invariants() {
		if strings.HasPrefix(string(inv.ID), short+"-") {
			return string(inv.ID)
		}
	}
	return short
}

// idLess orders G1…G8 before I1…I12, numerically.
func idLess(a, b string) bool {
	if a[0] != b[0] {
		return a[0] == 'G'
	}
	var x, y int
	_, _ = fmt.Sscanf(a[1:], "%d", &x)
	_, _ = fmt.Sscanf(b[1:], "%d", &y)
	return x < y
}

// checks folds scenario verdicts into one per ID: broken when a run broke
// it (by the model's judgement of the shrunk trace, or, when the model
// names nothing, by the scenario's citation), holds when at least one
// citing scenario held and none broke it, not claimed when every citing
// scenario needed a capability not claimed. A protocol fault judges
// nothing (the report is not OK).
func checks(rs []ScenarioResult) []Check {
	by := map[string]*Check{}
	var ids []string
	for _, r := range rs {
		cited := r.Cites
		if r.Verdict == Broken {
			// What the trace shows, not what the scenario cites: a
			// divergence no invariant covers is listed under none.
			cited = r.Broke
		}
		verdict := r.Verdict
		if verdict == Holds && r.Cut() {
			// A run cut before what it cites holds for its steps only.
			verdict = NotClaimed
		}
		for _, id := range cited {
			c := by[id]
			if c == nil {
				c = &Check{ID: id}
				by[id] = c
				ids = append(ids, id)
			}
			switch verdict {
			case Broken:
				if c.Verdict != Broken {
					c.By = nil
				}
				c.Verdict = Broken
				if !slices.Contains(c.By, r.Name) {
					c.By = append(c.By, r.Name)
				}
			case Holds:
				if c.Verdict != Broken {
					c.Verdict = Holds
					if !slices.Contains(c.By, r.Name) {
						c.By = append(c.By, r.Name)
					}
				}
			case NotClaimed:
				if c.Verdict == "" {
					c.Verdict = NotClaimed
				}
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return idLess(ids[i], ids[j]) })
	var out []Check
	for _, id := range ids {
		if c := by[id]; c.Verdict != "" {
			out = append(out, *c)
		}
	}
	return out
}
