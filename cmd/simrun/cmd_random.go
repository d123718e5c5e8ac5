package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// randomOptions is one random conformance campaign.
type randomOptions struct {
	seed, runs, steps int
	names             int
	faults, design    string
	// v2: the caches write v2 in lockstep with design (no-commit-point,
	// compaction off: sim.V2Design), as the scenario directive format v2.
	v2            bool
	backend       sim.Backend
	out           string
	verbose       bool
	parallel      int
	shard, shards int // this process runs shard of shards (0 of 1: all)
}

// seeds is the half-open seed range this process runs: shard i of n takes
// the i-th of n contiguous, near-equal slices of [seed, seed+runs), so any
// batch system can spread one campaign over machines and the union of the
// shards is exactly the campaign.
func (o randomOptions) seeds() (lo, hi int) {
	n := max(o.shards, 1)
	lo = o.seed + o.runs*o.shard/n
	hi = o.seed + o.runs*(o.shard+1)/n
	return lo, hi
}

// command is the simrun command line that runs seed alone.
func (o randomOptions) command(seed int) string {
	return fmt.Sprintf("simrun random --seed %d --steps %d --runs 1 --names %d --design %s --backend %s%s%s",
		seed, o.steps, o.names, o.design, o.backend, faultsFlag(o.faults), o.formatFlag())
}

// formatFlag is the --format flag of a v2 campaign ("" for v3).
func (o randomOptions) formatFlag() string {
	if o.v2 {
		return " --format v2"
	}
	return ""
}

// randomSummary is what a campaign (or a shard of one) found; --json
// prints it, and `simrun random merge` adds shards up.
type randomSummary struct {
	Design   string         `json:"design"`
	Backend  string         `json:"backend"`
	Names    int            `json:"names"`
	Steps    int            `json:"steps"`
	Faults   string         `json:"faults,omitempty"`
	Format   string         `json:"format,omitempty"`
	SeedLo   int            `json:"seed_lo"`
	SeedHi   int            `json:"seed_hi"` // exclusive
	Shards   []string       `json:"shards"`  // "i/n" of each shard added up
	Runs     int            `json:"runs"`
	Ops      int            `json:"ops"`
	Agreed   int            `json:"agreed"`
	Known    map[string]int `json:"known_divergences"`
	Failures []randomFail   `json:"failures"`
	WallMS   int64          `json:"wall_ms"`
}

// randomFail is one failing seed, shrunk.
type randomFail struct {
	Seed      int    `json:"seed"`
	Command   string `json:"command"`
	File      string `json:"file"`
	OpsFound  int    `json:"ops_found"`
	OpsShrunk int    `json:"ops_shrunk"`
	Error     string `json:"error"`
}

// cmdRandom runs seeded random op sequences in lockstep; a failure is
// shrunk by delta debugging and written as a scenario file.
func cmdRandom(e *env, args []string) int {
	if len(args) > 0 && args[0] == "merge" {
		return cmdRandomMerge(e, args[1:])
	}
	fs := newFlagSet(e, "random", "simrun random [--seed S] [--steps N] [--runs R] [--names N] [--faults SPEC] [--design NAME] [--format v2] [--backend crashfs|os] [--out DIR] [-v]",
		"              [--parallel N] [--shard I/N] [--json]",
		"simrun random merge SUMMARY.json ...   (add up the --json summaries of a campaign's shards)")
	var o randomOptions
	var backend, shard, format string
	var asJSON bool
	fs.IntVar(&o.seed, "seed", 1, "seed of the first run; run i uses seed+i")
	fs.IntVar(&o.steps, "steps", 60, "ops per run")
	fs.IntVar(&o.runs, "runs", 20, "number of runs")
	fs.IntVar(&o.names, "names", 1, "weight names in play (1-3; with 2 or more the two programs share w1)")
	fs.StringVar(&o.faults, "faults", "", "error injection in the faultinject/errorfs DSL, e.g. '(randomCalls 0.05 7 writes enospc)' (randomly is read as randomCalls, so a seed reproduces); only safety is compared")
	fs.StringVar(&o.design, "design", "reference", "model design; reference and on-compute run in lockstep with the cache (on-compute under VerifyOnCompute, with inferences after finalize), a variant runs the model alone and fails on its invariant violations")
	fs.StringVar(&backend, "backend", "crashfs", "crashfs (with power loss) or os")
	fs.StringVar(&format, "format", "v3", "file format the caches write: v3, or v2 (ExecuTorch's layout) in lockstep with the design no-commit-point, compaction off")
	fs.StringVar(&o.out, "out", os.TempDir(), "directory for the scenario files of shrunk failures (made if missing)")
	fs.BoolVar(&o.verbose, "v", false, "print one line per run")
	fs.IntVar(&o.parallel, "parallel", runtime.NumCPU(), "runs in flight at once (results do not depend on it)")
	fs.StringVar(&shard, "shard", "0/1", "run shard `I/N` of the campaign: the I-th of N contiguous slices of the seed range")
	fs.BoolVar(&asJSON, "json", false, "print a JSON summary (merge shards with simrun random merge)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	o.backend = sim.Backend(backend)
	if code := extraArgs(e, fs, "random"); code >= 0 {
		return code
	}
	if code := checkRanges(e, "random", atLeast("seed", int64(o.seed), 0), atLeast("steps", int64(o.steps), 1),
		atLeast("runs", int64(o.runs), 1), between("names", int64(o.names), 1, 3), atLeast("parallel", int64(o.parallel), 1)); code >= 0 {
		return code
	}
	if n, err := fmt.Sscanf(shard, "%d/%d", &o.shard, &o.shards); err != nil || n != 2 || o.shards < 1 || o.shard < 0 || o.shard >= o.shards {
		return usageError(e, "random", "--shard %q (want I/N with 0 <= I < N)", shard)
	}
	if o.backend != sim.BackendCrashFS && o.backend != sim.BackendOS {
		return usageError(e, "random", "--backend %q (want crashfs or os)", backend)
	}
	if _, err := model.DesignByName(o.design); err != nil {
		fmt.Fprintf(e.stderr, "simrun random: %v\n", err)
		return exitUsage
	}
	switch d, _ := sim.V2Design(); {
	case format == "v3":
	case format != "v2":
		return usageError(e, "random", "--format %q (want v3 or v2)", format)
	case o.design != "reference" && o.design != d.Name:
		return usageError(e, "random", "--format v2 runs the design %s, not %s", d.Name, o.design)
	default:
		o.v2, o.design = true, d.Name
	}
	if o.faults != "" {
		// Per-path random choices would follow the cache's random temporary
		// file names; one generator in call order makes a seed reproduce.
		f, err := sim.SeededFaults(o.faults)
		if err != nil {
			fmt.Fprintf(e.stderr, "simrun random: --faults: %v\n", err)
			return exitUsage
		}
		o.faults = f
	}
	progress := e.stdout
	if asJSON {
		progress = e.stderr // stdout is the JSON alone
	}
	s, err := runRandom(progress, o)
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun random: %v\n", err)
		return exitProblem
	}
	if asJSON {
		if err := writeJSON(e.stdout, s); err != nil {
			fmt.Fprintf(e.stderr, "simrun random: %v\n", err)
			return exitProblem
		}
	} else {
		fmt.Fprintln(e.stdout, s.line(o))
	}
	if len(s.Failures) > 0 {
		return exitProblem
	}
	return exitOK
}

func (s randomSummary) line(o randomOptions) string {
	var known []string
	for id, n := range s.Known {
		known = append(known, fmt.Sprintf("%s=%d", id, n))
	}
	sort.Strings(known)
	k := "none"
	if len(known) > 0 {
		k = strings.Join(known, " ")
	}
	return fmt.Sprintf("random: design %s%s, backend %s, %d runs x %d steps from seed %d: %d agreed, %d failed (%d ops); stopped at known divergences: %s",
		o.design, o.formatFlag(), o.backend, s.Runs, o.steps, s.SeedLo, s.Agreed, len(s.Failures), s.Ops, k)
}

// seedResult is what one seed's run found; workers fill them in any order
// and the campaign reports them in seed order, so the output does not
// depend on --parallel.
type seedResult struct {
	ops   int
	err   error
	known string
	fail  *randomFail
	note  string // the line printed for this seed ("" for none)
}

// runRandom runs the campaign on o.parallel workers; w receives the lines
// of verbose runs and failures, in seed order.
func runRandom(w io.Writer, o randomOptions) (randomSummary, error) {
	lo, hi := o.seeds()
	s := randomSummary{
		Design: o.design, Backend: string(o.backend), Names: o.names, Steps: o.steps, Faults: o.faults, Format: strings.TrimPrefix(o.formatFlag(), " --format "),
		SeedLo: lo, SeedHi: hi, Shards: []string{fmt.Sprintf("%d/%d", o.shard, max(o.shards, 1))},
		Known: map[string]int{}, Failures: []randomFail{},
	}
	d, err := model.DesignByName(o.design)
	if o.v2 {
		d, err = sim.V2Design()
	}
	if err != nil {
		return s, err
	}
	b := model.DefaultBounds()
	if o.names > 0 {
		b.Names = o.names
	}
	if err := b.Validate(); err != nil {
		return s, err
	}
	start := time.Now()
	results := make([]seedResult, hi-lo)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(o.parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = runSeed(o, d, b, lo+i)
			}
		}()
	}
	for i := range results {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, r := range results {
		s.Runs++
		s.Ops += r.ops
		switch {
		case r.err != nil:
			return s, r.err
		case r.fail != nil:
			s.Failures = append(s.Failures, *r.fail)
		case r.known != "":
			s.Known[r.known]++
		default:
			s.Agreed++
		}
		if r.note != "" {
			fmt.Fprint(w, r.note)
		}
	}
	s.WallMS = time.Since(start).Milliseconds()
	return s, nil
}

// runSeed runs one seed, and writes its shrunk scenario when it fails.
func runSeed(o randomOptions, d model.Design, b model.Bounds, seed int) seedResult {
	// A design variant fails on its invariant violations; v2 is held to
	// no-commit-point's results, whose violations are the design's own.
	cfg := sim.Config{Backend: o.backend, Faults: o.faults, AnyViolation: !o.v2}
	if o.v2 {
		cfg.Format = spec.FormatV2
	}
	c := sim.CheckSeed(cfg, d, b, uint64(seed), o.steps, o.command(seed))
	r := seedResult{ops: c.Ops, known: c.Known}
	if !c.Failed() {
		if o.verbose && c.Err == nil {
			r.note = fmt.Sprintf("seed %d: %d ops agreed\n", seed, c.Ops)
		} else if o.verbose {
			r.note = fmt.Sprintf("seed %d: %v\n", seed, c.Err)
		}
		return r
	}
	name := o.design
	if o.v2 {
		name += "-v2"
	}
	path := filepath.Join(o.out, fmt.Sprintf("random-%s-seed%d.scenario", name, seed))
	// A failure is worth more than the directory's absence: make it.
	if werr := os.MkdirAll(o.out, 0o755); werr != nil {
		r.err = werr
		return r
	}
	if werr := os.WriteFile(path, []byte(c.Scenario), 0o644); werr != nil {
		r.err = werr
		return r
	}
	r.fail = &randomFail{Seed: seed, Command: o.command(seed), File: path, OpsFound: c.Ops, OpsShrunk: len(c.Shrunk), Error: c.Err.Error()}
	r.note = fmt.Sprintf("seed %d: FAIL: %v\n  shrunk to %d ops: %s\n", seed, c.Err, len(c.Shrunk), path)
	return r
}

// cmdRandomMerge adds up the --json summaries of one campaign's shards:
// total runs, ops, agreements, known divergences and every failure with its
// shrunk scenario. Summaries of different campaigns (design, backend,
// names, steps, faults, format) are refused; so are overlapping seed ranges.
func cmdRandomMerge(e *env, paths []string) int {
	if len(paths) == 0 {
		return usageError(e, "random merge", "at least one SUMMARY.json is required")
	}
	var total randomSummary
	type span struct{ lo, hi int }
	var spans []span
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(e.stderr, "simrun random merge: %v\n", err)
			return exitProblem
		}
		var s randomSummary
		if err := json.Unmarshal(b, &s); err != nil {
			fmt.Fprintf(e.stderr, "simrun random merge: %s: %v\n", p, err)
			return exitProblem
		}
		if i == 0 {
			total = randomSummary{Design: s.Design, Backend: s.Backend, Names: s.Names, Steps: s.Steps, Faults: s.Faults,
				SeedLo: s.SeedLo, SeedHi: s.SeedHi, Known: map[string]int{}, Failures: []randomFail{}, Shards: []string{}}
		}
		if s.Design != total.Design || s.Backend != total.Backend || s.Names != total.Names || s.Steps != total.Steps || s.Faults != total.Faults || s.Format != total.Format {
			fmt.Fprintf(e.stderr, "simrun random merge: %s is another campaign (design %s, backend %s, names %d, steps %d, faults %q)\n",
				p, s.Design, s.Backend, s.Names, s.Steps, s.Faults)
			return exitProblem
		}
		for _, sp := range spans {
			if s.SeedLo < sp.hi && sp.lo < s.SeedHi {
				fmt.Fprintf(e.stderr, "simrun random merge: %s: seeds [%d, %d) counted twice\n", p, s.SeedLo, s.SeedHi)
				return exitProblem
			}
		}
		spans = append(spans, span{s.SeedLo, s.SeedHi})
		total.SeedLo, total.SeedHi = min(total.SeedLo, s.SeedLo), max(total.SeedHi, s.SeedHi)
		total.Shards = append(total.Shards, s.Shards...)
		total.Runs += s.Runs
		total.Ops += s.Ops
		total.Agreed += s.Agreed
		total.WallMS += s.WallMS
		for k, n := range s.Known {
			total.Known[k] += n
		}
		total.Failures = append(total.Failures, s.Failures...)
	}
	sort.Slice(total.Failures, func(i, j int) bool { return total.Failures[i].Seed < total.Failures[j].Seed })
	if err := writeJSON(e.stdout, total); err != nil {
		fmt.Fprintf(e.stderr, "simrun random merge: %v\n", err)
		return exitProblem
	}
	missing := total.SeedHi - total.SeedLo - total.Runs
	gap := ""
	if missing > 0 {
		gap = fmt.Sprintf(", %d seeds missing", missing)
	}
	fmt.Fprintf(e.stderr, "merged %d shards: %d runs, %d ops, %d agreed, %d failed, seeds [%d, %d)%s\n",
		len(paths), total.Runs, total.Ops, total.Agreed, len(total.Failures), total.SeedLo, total.SeedHi, gap)
	if len(total.Failures) > 0 || missing > 0 {
		return exitProblem
	}
	return exitOK
}

func faultsFlag(f string) string {
	if f == "" {
		return ""
	}
	return fmt.Sprintf(" --faults '%s'", f)
}
