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

// ScenarioResult is the verdict on one scenario file.
type ScenarioResult struct {
	Name    string   `json:"name"`
	Verdict string   `json:"verdict"`
	Cites   []string `json:"cites,omitempty"`   // guarantee and invariant IDs its header cites
	Needs   []string `json:"needs,omitempty"`   // capabilities it needs
	Missing []string `json:"missing,omitempty"` // of those, not claimed
	Reason  string   `json:"reason,omitempty"`  // why it failed or was skipped
	Steps   int      `json:"steps,omitempty"`
}

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
	_     struct{}
}

// Run starts the adapter once to read its hello, then replays every
// scenario it can through it, one adapter process per abstract process,
// on a cache file in a fresh temporary directory per scenario.
func Run(o Options) (*Report, error) {
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
	_ = cl.Close()
	for _, f := range files {
		rep.Scenarios = append(rep.Scenarios, runScenario(o, rep.Adapter, f))
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
	if !slices.Contains(backends, sim.BackendOS) {
		res.Verdict = Skipped
		res.Reason = "needs a simulated power loss (crashfs), which a process on the OS filesystem cannot suffer"
		if slices.Equal(backends, []sim.Backend{sim.BackendModel}) {
			res.Reason = "a design variant: runs on the model alone"
		}
		return res
	}
	text, needs, err := prepare(f.Text)
	if err != nil {
		res.Verdict, res.Reason = Skipped, err.Error()
		return res
	}
	res.Needs = needs
	for _, c := range needs {
		if !h.Claims(c) {
			res.Missing = append(res.Missing, c)
		}
	}
	if len(res.Missing) > 0 {
		res.Verdict = NotClaimed
		return res
	}
	dir, err := os.MkdirTemp("", "xpwc-conform-")
	if err != nil {
		res.Verdict, res.Reason = Fault, err.Error()
		return res
	}
	defer func() { _ = os.RemoveAll(dir) }()
	r := sim.RunScenario(sim.File{Name: f.Name, Text: text}, sim.Config{
		Backend: sim.BackendOS, Dir: dir, Open: Opener(o.Command, nil), Trace: o.Trace})
	res.Steps = r.Steps
	switch {
	case errors.Is(r.Err, sim.ErrImplementation):
		res.Verdict, res.Reason = Fault, r.Err.Error()
	case r.Err != nil:
		res.Verdict, res.Reason = Broken, r.Err.Error()
	case len(r.Mismatches) > 0:
		m := r.Mismatches[0]
		res.Verdict = Broken
		res.Reason = fmt.Sprintf("%s:%d: %s: want %q, got %q", f.Name, m.Line, m.Directive, m.Want, m.Got)
	default:
		res.Verdict = Holds
	}
	return res
}

// prepare drops the directives that read the Go cache's own counters and
// view (stats, state), which the protocol does not carry, and lists the
// capabilities the rest needs.
func prepare(text string) (string, []string, error) {
	ds, err := sim.ParseScenario(text)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	need := map[string]bool{}
	for _, d := range ds {
		f := strings.Fields(d.Text)
		switch f[0] {
		case "stats", "state":
			continue
		case "file":
			need[CapFormatV3] = true
		}
		if op, err := sim.ParseOpLine(d.Text); err == nil {
			for _, c := range needsOp(op) {
				need[c] = true
			}
		}
		// The double-separator form keeps blank lines of the output.
		fmt.Fprintf(&b, "%s\n----\n----\n%s\n----\n----\n\n", d.Text, d.Expected)
	}
	var needs []string
	for _, c := range Capabilities() {
		if need[c] {
			needs = append(needs, c)
		}
	}
	return b.String(), needs, nil
}

// needsOp is what an op asks of an implementation beyond the protocol.
func needsOp(op spec.Op) []string {
	var out []string
	if op.Proc > 0 {
		out = append(out, CapLocking) // a second process on the path
	}
	switch {
	case op.Kind == spec.EvForeign && op.Foreign == spec.ForeignData:
		out = append(out, CapFormatV3, CapChecksums)
	case op.Kind == spec.EvForeign:
		out = append(out, CapFormatV3, CapCrashSafeCommit)
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
	sort.Slice(out, func(i, j int) bool { return idLess(out[i], out[j]) })
	return out
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

// checks folds scenario verdicts into one per cited ID: broken when any
// citing scenario broke, holds when at least one held and none broke, not
// claimed when every citing scenario needed a capability not claimed.
func checks(rs []ScenarioResult) []Check {
	by := map[string]*Check{}
	var ids []string
	for _, r := range rs {
		for _, id := range r.Cites {
			c := by[id]
			if c == nil {
				c = &Check{ID: id}
				by[id] = c
				ids = append(ids, id)
			}
			switch r.Verdict {
			case Broken, Fault:
				if c.Verdict != Broken {
					c.By = nil
				}
				c.Verdict = Broken
				c.By = append(c.By, r.Name)
			case Holds:
				if c.Verdict != Broken {
					c.Verdict = Holds
					c.By = append(c.By, r.Name)
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
