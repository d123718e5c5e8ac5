package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/model/explore"
	"github.com/xpwc/xpwc/sim"
)

// suiteOptions bound the no-argument run. The defaults finish well under
// two minutes on two cores; tests pass smaller ones.
type suiteOptions struct {
	exploreDepth int // 0: model.DefaultBounds().Depth
	randomRuns   int
	randomSteps  int
	osRuns       int // random runs on the OS filesystem
}

func defaultSuite() suiteOptions {
	return suiteOptions{randomRuns: 300, randomSteps: 60, osRuns: 10}
}

// row is one line of the summary table.
type row struct {
	part, name, result, detail string
	ok                         bool
}

// cmdSuite is simrun without a command: the embedded scenario suite on
// every backend, a bounded exploration of every design (the reference must
// be clean and reach every goal, each variant must show its known bug),
// the known divergences (each must still diverge as recorded) and a short
// random conformance run. Exit 0 only if every row passed.
func cmdSuite(e *env, args []string) int {
	fs := flag.NewFlagSet("simrun", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		return exitUsage
	}
	return runSuite(e, defaultSuite())
}

func runSuite(e *env, o suiteOptions) int {
	start := time.Now()
	var rows []row
	rows = append(rows, suiteScenarios(e.stderr)...)
	rows = append(rows, suiteKnown()...)
	rows = append(rows, suiteExplore(o)...)
	rows = append(rows, suiteRandom(o)...)

	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PART\tWHAT\tRESULT\tDETAIL")
	failed := 0
	for _, r := range rows {
		status := "ok"
		if !r.ok {
			status = "FAIL"
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\n", r.part, r.name, status, r.result, r.detail)
	}
	_ = tw.Flush()
	fmt.Fprintf(e.stdout, "\n%d checks, %d failed, %.1fs\n", len(rows), failed, time.Since(start).Seconds())
	if failed > 0 {
		return exitProblem
	}
	return exitOK
}

// suiteScenarios replays the embedded suite, one row per backend.
func suiteScenarios(errw io.Writer) []row {
	files, err := sim.Scenarios()
	if err != nil {
		return []row{{part: "scenarios", name: "embedded", result: err.Error()}}
	}
	type tally struct{ ran, passed int }
	by := map[sim.Backend]*tally{}
	var fails []string
	for _, f := range files {
		// A file that does not parse runs once and reports where.
		backends, _ := sim.Backends(f.Text)
		for _, b := range backends {
			t := by[b]
			if t == nil {
				t = &tally{}
				by[b] = t
			}
			t.ran++
			cfg := sim.Config{Backend: b}
			if b == sim.BackendOS {
				dir, err := os.MkdirTemp("", "xpwc-suite-")
				if err != nil {
					fails = append(fails, err.Error())
					continue
				}
				cfg.Dir = dir
				defer func() { _ = os.RemoveAll(dir) }()
			}
			rep := sim.RunScenario(f, cfg)
			if rep.OK() {
				t.passed++
				continue
			}
			fails = append(fails, fmt.Sprintf("%s [%s]", f.Name, b))
			printReport(errw, rep)
		}
	}
	var rows []row
	for _, b := range []sim.Backend{sim.BackendModel, sim.BackendCrashFS, sim.BackendOS} {
		t := by[b]
		if t == nil {
			continue
		}
		what := map[sim.Backend]string{
			sim.BackendModel:   "historical designs, model only",
			sim.BackendCrashFS: "reference, lockstep on crashfs",
			sim.BackendOS:      "reference, lockstep on the OS filesystem",
		}[b]
		rows = append(rows, row{part: "scenarios", name: what,
			result: fmt.Sprintf("%d/%d", t.passed, t.ran), ok: t.passed == t.ran})
	}
	if len(fails) > 0 {
		rows = append(rows, row{part: "scenarios", name: "failing", result: fmt.Sprint(len(fails)), detail: strings.Join(fails, ", ")})
	}
	return rows
}

// suiteKnown replays the known divergences: each must still stop where
// its header says, else the model or the cache changed and the file must
// move to the suite (or be re-recorded).
func suiteKnown() []row {
	files, err := sim.KnownScenarios()
	if err != nil {
		return []row{{part: "known", name: "embedded", result: err.Error()}}
	}
	if len(files) == 0 {
		return []row{{part: "known divergences", name: "none open", ok: true, result: "0"}}
	}
	var rows []row
	for _, f := range files {
		rep := sim.RunScenario(f, sim.Config{Backend: sim.BackendCrashFS})
		id, ok := rep.Known()
		r := row{part: "known divergences", name: f.Name, ok: ok && id == f.Name && len(rep.Mismatches) == 0}
		if r.ok {
			r.result = "still diverges"
			r.detail = "see docs/scenarios.md"
		} else {
			r.result = "changed"
			r.detail = fmt.Sprintf("%v; move it to the suite or re-record it", rep.Err)
		}
		rows = append(rows, r)
	}
	return rows
}

// suiteExplore explores every design within the default bounds.
func suiteExplore(o suiteOptions) []row {
	b := model.DefaultBounds()
	if o.exploreDepth > 0 {
		b.Depth = o.exploreDepth
	}
	var rows []row
	for _, d := range model.Designs() {
		// Each design at the bounds its bugs need (Design.ExpectNeeds):
		// ExecuTorch's lost commit needs a second name.
		opts := explore.Options{Bounds: d.Widen(b), StopWhenFound: d.Expect}
		res, err := explore.Run(d, opts)
		r := row{part: "explore", name: d.Name}
		switch {
		case err != nil:
			r.result = err.Error()
		case len(d.Expect) == 0:
			r.ok = len(res.Violations) == 0 && len(res.Covered) == len(model.CoversFor(&d))
			r.result = fmt.Sprintf("%d violations", len(res.Violations))
			r.detail = fmt.Sprintf("%d states, depth %d, %d/%d goals reached, %.1fs",
				res.States, res.Depth, len(res.Covered), len(model.CoversFor(&d)), res.Seconds)
		default:
			var found []string
			r.ok = true
			for _, inv := range d.Expect {
				v, ok := res.Violated(inv)
				if !ok {
					r.ok = false
					found = append(found, string(inv)+" NOT FOUND")
					continue
				}
				found = append(found, fmt.Sprintf("%s in %d ops", inv, len(v.Trace)))
			}
			r.result = "bug found"
			if !r.ok {
				r.result = "bug missed"
			}
			r.detail = fmt.Sprintf("%s; %d states, %.1fs", strings.Join(found, ", "), res.States, res.Seconds)
		}
		rows = append(rows, r)
	}
	return rows
}

// suiteRandom runs a short random conformance campaign on each backend.
func suiteRandom(o suiteOptions) []row {
	var rows []row
	for _, c := range []struct {
		backend     sim.Backend
		runs, names int
		faults      string
	}{
		{sim.BackendCrashFS, o.randomRuns, 1, ""},
		{sim.BackendCrashFS, o.randomRuns / 3, 3, ""},
		{sim.BackendOS, o.osRuns, 1, ""},
		// Safety under injected I/O errors (I2, I12, G8): every kind of
		// call may fail; the seed reproduces (randomCalls).
		{sim.BackendCrashFS, o.randomRuns / 3, 3, "(randomCalls 0.03 11 eio)"},
	} {
		if c.runs == 0 {
			continue
		}
		ro := randomOptions{seed: 1, runs: c.runs, steps: o.randomSteps, names: c.names, design: "reference",
			backend: c.backend, out: os.TempDir(), faults: c.faults, parallel: runtime.NumCPU()}
		var log strings.Builder
		s, err := runRandom(&log, ro)
		r := row{part: "random", name: fmt.Sprintf("reference on %s, %d name(s), %d x %d ops", c.backend, c.names, c.runs, o.randomSteps)}
		if c.faults != "" {
			r.name += ", faults " + c.faults
		}
		if err != nil {
			r.result = err.Error()
		} else {
			r.ok = len(s.Failures) == 0
			r.result = fmt.Sprintf("%d agreed, %d failed", s.Agreed, len(s.Failures))
			r.detail = knownDetail(s.Known)
			if !r.ok {
				var files []string
				for _, f := range s.Failures {
					files = append(files, f.File)
				}
				r.detail = strings.Join(files, ", ")
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func knownDetail(known map[string]int) string {
	if len(known) == 0 {
		return ""
	}
	var parts []string
	for _, k := range sim.KnownDivergences() {
		if n := known[k.ID]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k.ID, n))
		}
	}
	return "stopped at known divergences: " + strings.Join(parts, " ")
}
