package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/model/explore"
	"github.com/xpwc/xpwc/spec"
)

// exploreJSON is the JSON form of one exploration (docs/model.md).
type exploreJSON struct {
	Design          string     `json:"design"`
	Bounds          boundsJSON `json:"bounds"`
	States          int        `json:"states"`
	Transitions     int        `json:"transitions"`
	Depth           int        `json:"depth"`
	Seconds         float64    `json:"seconds"`
	StatesPerSecond float64    `json:"states_per_second"`
	Exhausted       bool       `json:"exhausted"`
	Workers         int        `json:"workers"`
	ResidentBytes   uint64     `json:"resident_bytes"`
	BytesPerState   float64    `json:"resident_bytes_per_state"`
	// BaselineBytes is the resident set before the exploration began;
	// AddedPerState is what the exploration added, per state.
	BaselineBytes uint64          `json:"baseline_resident_bytes"`
	AddedPerState float64         `json:"added_resident_bytes_per_state"`
	Fingerprints  bool            `json:"fingerprints"`
	Stopped       bool            `json:"stopped_when_found,omitempty"`
	Expected      []string        `json:"expected"`
	Violations    []violationJSON `json:"violations"`
	Covered       []string        `json:"covered"`
	Liveness      livenessJSON    `json:"liveness"`
}

// livenessJSON is the convergence check over the whole graph: checked only
// when the run exhausted the state space.
type livenessJSON struct {
	Checked        bool        `json:"checked"`
	FairComponents int         `json:"fair_components"`
	Seconds        float64     `json:"seconds"` // after the search's seconds
	Violations     []lassoJSON `json:"violations"`
}

type lassoJSON struct {
	Invariant string   `json:"invariant"`
	Guarantee string   `json:"guarantee"`
	Prefix    []string `json:"prefix"`
	Cycle     []string `json:"cycle"`
}

type boundsJSON struct {
	Procs    int  `json:"procs"`
	Names    int  `json:"names"`
	Programs int  `json:"programs"`
	Kernels  int  `json:"kernels"`
	Sources  int  `json:"sources"`
	Foreign  bool `json:"foreign"`
	Depth    int  `json:"depth"`
}

type violationJSON struct {
	Invariant string   `json:"invariant"`
	Guarantee string   `json:"guarantee"`
	TraceLen  int      `json:"trace_len"`
	Trace     []string `json:"trace"`
}

// cmdExplore explores one design of the lifecycle model exhaustively within
// bounds, or (--all) every design, checking that the reference is clean and
// that each historical variant's known bug is found. Exit 1 means a
// violation was found (--design), or that the expectations of --all did not
// hold.
func cmdExplore(e *env, args []string) int {
	fs := newFlagSet(e, "explore", "simrun explore [--design NAME | --all | --list-designs] [--depth N] [--max-states N] [--json] [--quiet]",
		"               [--max-memory MiB] [--procs N] [--names N] [--programs N] [--kernels N] [--sources N] [--foreign] [--no-symmetry]",
		"               [--no-name-symmetry] [--keep-dead-fields] [--workers N] [--liveness] [--fingerprints] [--mermaid] [--scenarios DIR]")
	def := model.ExhaustiveBounds()
	name := fs.String("design", "reference", "design to explore (see --list-designs)")
	depth := fs.Int("depth", def.Depth, "longest op sequence explored (0: no bound, to the end of the state space)")
	procs := fs.Int("procs", def.Procs, "processes (1-2)")
	names := fs.Int("names", def.Names, "tensor names (1-3)")
	programs := fs.Int("programs", def.Programs, "programs (1-2)")
	kernels := fs.Int("kernels", def.Kernels, "kernel layout versions (1-2; 2 allows an upgrade)")
	sources := fs.Int("sources", def.Sources, "source versions per name (1-2; 2 allows a source change)")
	foreign := fs.Bool("foreign", def.Foreign, "foreign writers and clobbered options")
	maxStates := fs.Int("max-states", 0, "stop after this many states (0: no limit)")
	maxMemory := fs.Int("max-memory", 0, "stop when the heap passes this many `MiB` (0: no limit)")
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	list := fs.Bool("list-designs", false, "list the designs and exit")
	all := fs.Bool("all", false, "explore every design and print a table")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	noSym := fs.Bool("no-symmetry", false, "visit a state and its mirror image (A and B swapped) separately (and names as --no-name-symmetry)")
	keepDead := fs.Bool("keep-dead-fields", false, "keep apart states that differ only in fields no future step reads (forgotten by default)")
	noNameSym := fs.Bool("no-name-symmetry", false, "visit a state and the state with w0 and w1 exchanged separately (exchanged by default when every program packs both or neither)")
	workers := fs.Int("workers", 1, "goroutines expanding states (the same states and traces for every count)")
	liveness := fs.Bool("liveness", true, "check convergence over the whole graph when the state space is exhausted")
	fingerprints := fs.Bool("fingerprints", false, "keep only the visited states' fingerprints in memory (about 12 bytes a state), the rest in temporary files")
	mermaid := fs.Bool("mermaid", false, "also print each counterexample as a Mermaid sequence diagram")
	scenarios := fs.String("scenarios", "", "write each counterexample as a scenario file (and a Mermaid .mmd beside it) into `DIR`")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if code := extraArgs(e, fs, "explore"); code >= 0 {
		return code
	}
	if code := checkRanges(e, "explore", between("depth", int64(*depth), 0, 1<<10), between("workers", int64(*workers), 1, 64),
		atLeast("max-states", int64(*maxStates), 0), atLeast("max-memory", int64(*maxMemory), 0)); code >= 0 {
		return code
	}
	b := def
	b.Depth, b.Procs, b.Names, b.Programs = *depth, *procs, *names, *programs
	b.Kernels, b.Sources, b.Foreign = *kernels, *sources, *foreign
	if err := b.Validate(); err != nil {
		fmt.Fprintf(e.stderr, "simrun explore: %v\n", err)
		return exitUsage
	}
	// Ctrl-C ends the run with what was found so far (exit 130).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := explore.Options{Bounds: b, MaxStates: *maxStates, NoSymmetry: *noSym, NoNameSymmetry: *noNameSym, KeepDeadFields: *keepDead,
		Stop: ctx.Done(), MaxHeapBytes: uint64(*maxMemory) << 20, Workers: *workers, Liveness: *liveness,
		Fingerprints: *fingerprints, TempFiles: osTemp{}}
	if *list {
		// Named bounds are explored; with none, the list is designs.json's,
		// recorded at model.DefaultBounds (depth 14, two programs): the
		// explorer's own default runs every design to the end, minutes for
		// some, which is --all's job, not a listing's.
		named := false
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "depth", "procs", "names", "programs", "kernels", "sources", "foreign":
				named = true
			}
		})
		if !named {
			opts.Bounds = model.DefaultBounds()
		}
		return listDesigns(e, opts, *asJSON)
	}
	if !*quiet {
		opts.Progress = e.stderr
	}
	out := counterexamples{mermaid: *mermaid, dir: *scenarios}
	if err := out.makeDir(); err != nil {
		fmt.Fprintf(e.stderr, "simrun explore: --scenarios: %v\n", err)
		return exitUsage
	}
	if *all {
		return exploreAll(e, opts, *asJSON, out)
	}
	d, err := model.DesignByName(*name)
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun explore: %v (see --list-designs)\n", err)
		return exitUsage
	}
	baseline := residentBytes("VmRSS:")
	r, err := explore.Run(d, opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun explore: %v\n", err)
		return exitUsage
	}
	if *asJSON {
		j := toJSON(d, r)
		j.Fingerprints = opts.Fingerprints
		j.BaselineBytes = baseline
		if j.ResidentBytes > baseline {
			j.AddedPerState = float64(j.ResidentBytes-baseline) / float64(max(r.States, 1))
		}
		if err := writeJSON(e.stdout, j); err != nil {
			fmt.Fprintf(e.stderr, "simrun explore: %v\n", err)
			return exitProblem
		}
	} else {
		writeResult(e.stdout, d, r)
	}
	if err := out.write(e, d, r); err != nil {
		fmt.Fprintf(e.stderr, "simrun explore: %v\n", err)
		return exitProblem
	}
	if r.Interrupted {
		return exitInterrupted
	}
	if len(r.Violations) > 0 || len(r.Liveness.Violations) > 0 {
		return exitProblem
	}
	return exitOK
}

func listDesigns(e *env, opts explore.Options, asJSON bool) int {
	type row struct {
		Name    string   `json:"name"`
		Expect  []string `json:"expect"`
		Found   []string `json:"found"`
		States  int      `json:"states"`
		Source  string   `json:"source"`
		Summary string   `json:"summary"`
	}
	var rows []row
	// At the default bounds the figures come from designs.json, which
	// TestDesignTableIsCurrent regenerates (-update) and holds to a fresh
	// exploration: the list is at once. Other bounds are explored.
	table, fromTable := designTable(), opts.Bounds == model.DefaultBounds() && opts.MaxStates == 0 && !opts.NoSymmetry
	for _, d := range model.Designs() {
		if t, ok := table[d.Name]; ok && fromTable {
			rows = append(rows, row{d.Name, ids(d.Expect), t.Found, t.States, d.Source, d.Summary})
			continue
		}
		// What a design breaks is what the explorer finds at these
		// bounds, not a list kept by hand; the catalog's expectation is
		// shown beside it.
		r, err := explore.Run(d, opts)
		if err != nil {
			fmt.Fprintf(e.stderr, "simrun explore: %v\n", err)
			return exitUsage
		}
		found := []string{}
		for _, v := range r.Violations {
			found = append(found, string(v.Invariant))
		}
		rows = append(rows, row{d.Name, ids(d.Expect), found, r.States, d.Source, d.Summary})
		if r.Interrupted {
			break
		}
	}
	if asJSON {
		if err := writeJSON(e.stdout, rows); err != nil {
			return exitProblem
		}
		return exitOK
	}
	b := opts.Bounds
	how := "found by exploring it"
	if fromTable {
		how = "found by exploring it, from designs.json"
	}
	fmt.Fprintf(e.stdout, "invariants each design breaks, %s (depth %d, procs %d, names %d, programs %d, kernels %d, sources %d, foreign %v):\n",
		how, b.Depth, b.Procs, b.Names, b.Programs, b.Kernels, b.Sources, b.Foreign)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DESIGN\tBREAKS (explored)\tHISTORICAL BUG\tSTATES\tSOURCE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.Name, orDash(strings.Join(r.Found, ",")), orDash(strings.Join(r.Expect, ",")), r.States, r.Source)
	}
	if err := tw.Flush(); err != nil {
		return exitProblem
	}
	return exitOK
}

// designRow is one design's line of designs.json: what exploring it at the
// default bounds finds.
type designRow struct {
	Name   string   `json:"name"`
	Found  []string `json:"found"`
	States int      `json:"states"`
}

//go:embed designs.json
var designsJSON []byte

// designTable is designs.json by design name; empty if it does not parse
// (TestDesignTableIsCurrent fails then), so every design is explored.
func designTable() map[string]designRow {
	var rows []designRow
	out := map[string]designRow{}
	if json.Unmarshal(designsJSON, &rows) != nil {
		return out
	}
	for _, r := range rows {
		out[r.Name] = r
	}
	return out
}

// exploreDesignTable explores every design at the default bounds: the
// content of designs.json.
func exploreDesignTable() ([]designRow, error) {
	var rows []designRow
	for _, d := range model.Designs() {
		r, err := explore.Run(d, explore.Options{Bounds: model.DefaultBounds()})
		if err != nil {
			return nil, err
		}
		found := []string{}
		for _, v := range r.Violations {
			found = append(found, string(v.Invariant))
		}
		rows = append(rows, designRow{d.Name, found, r.States})
	}
	return rows, nil
}

// exploreAll runs the clean designs (the reference, and the reference under
// the on-compute policy) fully and each variant until its known bugs are
// found (or the bounds are exhausted).
//
// Without a depth bound every design is explored to the end, so that
// convergence is checked on each (LIVENESS): the reference must have no
// lasso, and a design known to break I4 must have one.
func exploreAll(e *env, opts explore.Options, asJSON bool, out counterexamples) int {
	ok := true
	var rows []exploreJSON
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	if !asJSON {
		fmt.Fprintln(tw, "DESIGN\tEXPECTED\tFOUND (trace length)\tLIVENESS\tSTATES\tSECONDS\tRESULT")
	}
	for _, d := range model.Designs() {
		o := opts
		expect, beyond := d.ExpectedAt(o.Bounds)
		if o.Bounds.Depth > 0 {
			o.StopWhenFound = expect
		}
		r, err := explore.Run(d, o)
		if err != nil {
			fmt.Fprintf(e.stderr, "simrun explore: %v\n", err)
			return exitUsage
		}
		verdict := "ok"
		if len(d.Expect) == 0 && len(r.Violations) > 0 {
			verdict, ok = "VIOLATED", false
		}
		for _, inv := range expect {
			if _, found := r.Violated(inv); !found {
				verdict, ok = "NOT FOUND: "+string(inv), false
			}
		}
		if verdict == "ok" && len(beyond) > 0 {
			verdict = "ok; " + needsText(d, beyond)
		}
		if lv := r.Liveness; lv.Checked {
			switch {
			case len(d.Expect) == 0 && len(lv.Violations) > 0:
				verdict, ok = "DOES NOT CONVERGE", false
			case expects(d, spec.InvConverge) && len(lv.Violations) == 0:
				verdict, ok = "NO LASSO: "+string(spec.InvConverge), false
			}
		}
		rows = append(rows, toJSON(d, r))
		if err := out.write(e, d, r); err != nil {
			fmt.Fprintf(e.stderr, "simrun explore: %v\n", err)
			return exitProblem
		}
		if !asJSON {
			var found []string
			for _, v := range r.Violations {
				found = append(found, fmt.Sprintf("%s (%d)", v.Invariant, len(v.Trace)))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.2f\t%s\n", d.Name, orDash(strings.Join(ids(d.Expect), ",")),
				orDash(strings.Join(found, ", ")), livenessVerdict(r.Liveness), r.States, r.Seconds, verdict)
		}
	}
	if asJSON {
		if err := writeJSON(e.stdout, struct {
			OK      bool          `json:"ok"`
			Designs []exploreJSON `json:"designs"`
		}{ok, rows}); err != nil {
			return exitProblem
		}
	} else if err := tw.Flush(); err != nil {
		return exitProblem
	}
	if !ok {
		return exitProblem
	}
	return exitOK
}

func writeResult(w io.Writer, d model.Design, r explore.Result) {
	b := r.Bounds
	fmt.Fprintf(w, "design %s: depth %d, %d states, %d transitions, %.2fs (%.0f states/s)",
		d.Name, r.Depth, r.States, r.Transitions, r.Seconds, r.StatesPerSecond())
	if r.Exhausted {
		fmt.Fprint(w, ", state space exhausted")
	}
	switch {
	case r.Interrupted:
		fmt.Fprint(w, ", interrupted: what was found so far")
	case r.OutOfMemory:
		fmt.Fprint(w, ", stopped at the --max-memory bound: what was found so far")
	case r.Truncated:
		fmt.Fprint(w, ", stopped at the --max-states bound: what was found so far")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "bounds: procs=%d names=%d programs=%d kernels=%d sources=%d foreign=%v\n",
		b.Procs, b.Names, b.Programs, b.Kernels, b.Sources, b.Foreign)
	fmt.Fprintf(w, "covered %d/%d reachability goals\n", len(r.Covered), len(model.CoversFor(&d)))
	fmt.Fprintf(w, "liveness: %s\n", livenessVerdict(r.Liveness))
	if c, ok := r.ReachedCover(model.CoverReinitTruncates); ok {
		// A bug of the design whose invariant has a shorter trace.
		fmt.Fprintf(w, "reached %s (docs/bugs.md section 20), %d ops:\n", c.Cover, len(c.Trace))
		for _, op := range c.Trace {
			fmt.Fprintf(w, "  %s\n", op)
		}
	}
	for _, l := range r.Liveness.Violations {
		inv, _ := spec.InvariantByID(l.Invariant)
		fmt.Fprintf(w, "lasso %s (%s): %d ops, then a cycle of %d ops repeated forever:\n", l.Invariant, inv.Guarantee, len(l.Prefix), len(l.Cycle))
		for _, op := range l.Prefix {
			fmt.Fprintf(w, "  %s\n", op)
		}
		fmt.Fprintln(w, "  -- cycle --")
		for _, op := range l.Cycle {
			fmt.Fprintf(w, "  %s\n", op)
		}
	}
	if len(r.Violations) == 0 {
		fmt.Fprintln(w, "violations: none")
		return
	}
	for _, v := range r.Violations {
		inv, _ := spec.InvariantByID(v.Invariant)
		fmt.Fprintf(w, "violation %s (%s), %d ops:\n", v.Invariant, inv.Guarantee, len(v.Trace))
		for _, op := range v.Trace {
			fmt.Fprintf(w, "  %s\n", op)
		}
	}
}

func toJSON(d model.Design, r explore.Result) exploreJSON {
	b := r.Bounds
	rss := residentBytes("VmHWM:")
	out := exploreJSON{
		Design:          d.Name,
		Bounds:          boundsJSON{b.Procs, b.Names, b.Programs, b.Kernels, b.Sources, b.Foreign, b.Depth},
		States:          r.States,
		Transitions:     r.Transitions,
		Depth:           r.Depth,
		Seconds:         r.Seconds,
		StatesPerSecond: r.StatesPerSecond(),
		Exhausted:       r.Exhausted,
		Workers:         r.Workers,
		ResidentBytes:   rss,
		BytesPerState:   float64(rss) / float64(max(r.States, 1)),
		Stopped:         r.Stopped,
		Expected:        ids(d.Expect),
		Violations:      []violationJSON{},
		Covered:         r.Covered,
	}
	for _, v := range r.Violations {
		inv, _ := spec.InvariantByID(v.Invariant)
		vj := violationJSON{Invariant: string(v.Invariant), Guarantee: string(inv.Guarantee), TraceLen: len(v.Trace)}
		for _, op := range v.Trace {
			vj.Trace = append(vj.Trace, op.String())
		}
		out.Violations = append(out.Violations, vj)
	}
	out.Liveness = livenessJSON{Checked: r.Liveness.Checked, FairComponents: r.Liveness.FairComponents, Seconds: r.LivenessSeconds, Violations: []lassoJSON{}}
	for _, l := range r.Liveness.Violations {
		inv, _ := spec.InvariantByID(l.Invariant)
		lj := lassoJSON{Invariant: string(l.Invariant), Guarantee: string(inv.Guarantee), Prefix: []string{}, Cycle: []string{}}
		for _, op := range l.Prefix {
			lj.Prefix = append(lj.Prefix, op.String())
		}
		for _, op := range l.Cycle {
			lj.Cycle = append(lj.Cycle, op.String())
		}
		out.Liveness.Violations = append(out.Liveness.Violations, lj)
	}
	return out
}

// livenessVerdict is the LIVENESS column: whether convergence was checked
// and what it found.
func livenessVerdict(l explore.Liveness) string {
	switch {
	case !l.Checked:
		return "not checked"
	case len(l.Violations) > 0:
		return fmt.Sprintf("lasso %s (%d fair components)", l.Violations[0].Invariant, l.FairComponents)
	case l.FairComponents > 0:
		return fmt.Sprintf("%d fair components, no lasso rebuilt", l.FairComponents)
	}
	return "converges"
}

func expects(d model.Design, inv spec.InvariantID) bool {
	for _, x := range d.Expect {
		if x == inv {
			return true
		}
	}
	return false
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func ids(in []spec.InvariantID) []string {
	out := []string{}
	for _, id := range in {
		out = append(out, string(id))
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// residentBytes is a resident-set figure of /proc/self/status: the peak
// (VmHWM; with one exploration per process, what it took) or the current
// one (VmRSS); 0 where there is none.
func residentBytes(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(field)); ok {
			kb, err := strconv.ParseUint(string(bytes.TrimSpace(bytes.TrimSuffix(rest, []byte("kB")))), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// needsText says which expected invariants the bounds were too small to
// show and the flags that reach them, so --all at the exhaustive bounds
// passes without hiding what it did not check.
func needsText(d model.Design, beyond []spec.InvariantID) string {
	var parts []string
	for _, inv := range beyond {
		need := d.ExpectNeeds[inv]
		var flags []string
		if need.Names > 0 {
			flags = append(flags, fmt.Sprintf("--names %d", need.Names))
		}
		if need.Sources > 0 {
			flags = append(flags, fmt.Sprintf("--sources %d", need.Sources))
		}
		parts = append(parts, fmt.Sprintf("%s needs %s", inv, strings.Join(flags, " ")))
	}
	return strings.Join(parts, ", ")
}
