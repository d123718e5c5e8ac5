package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// randomOptions is one random conformance campaign.
type randomOptions struct {
	seed, runs, steps int
	names             int
	faults, design    string
	backend           sim.Backend
	out               string
	verbose           bool
}

// randomSummary is what a campaign found.
type randomSummary struct {
	runs, agreed int
	known        map[string]int
	failures     []string // scenario paths written
}

// cmdRandom runs seeded random op sequences in lockstep; a failure is
// shrunk by delta debugging and written as a scenario file.
func cmdRandom(e *env, args []string) int {
	fs := newFlagSet(e, "random", "simrun random [--seed S] [--steps N] [--runs R] [--names N] [--faults SPEC] [--design NAME] [--backend crashfs|os] [--out DIR] [-v]")
	var o randomOptions
	var backend string
	fs.IntVar(&o.seed, "seed", 1, "seed of the first run; run i uses seed+i")
	fs.IntVar(&o.steps, "steps", 60, "ops per run")
	fs.IntVar(&o.runs, "runs", 20, "number of runs")
	fs.IntVar(&o.names, "names", 1, "weight names in play (1-3; with 2 or more the two programs share w1)")
	fs.StringVar(&o.faults, "faults", "", "error injection in the faultinject/errorfs DSL, e.g. '(randomCalls 0.05 7 writes enospc)' (randomly is read as randomCalls, so a seed reproduces); only safety is compared")
	fs.StringVar(&o.design, "design", "reference", "model design; a variant runs the model alone and fails on its invariant violations")
	fs.StringVar(&backend, "backend", "crashfs", "crashfs (with power loss) or os")
	fs.StringVar(&o.out, "out", os.TempDir(), "directory for the scenario files of shrunk failures")
	fs.BoolVar(&o.verbose, "v", false, "print one line per run")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	o.backend = sim.Backend(backend)
	if fs.NArg() != 0 {
		fs.Usage()
		return exitUsage
	}
	if code := checkRanges(e, "random", atLeast("seed", int64(o.seed), 0), atLeast("steps", int64(o.steps), 1),
		atLeast("runs", int64(o.runs), 1), between("names", int64(o.names), 1, 3)); code >= 0 {
		return code
	}
	if o.backend != sim.BackendCrashFS && o.backend != sim.BackendOS {
		return usageError(e, "random", "--backend %q (want crashfs or os)", backend)
	}
	if _, err := model.DesignByName(o.design); err != nil {
		fmt.Fprintf(e.stderr, "simrun random: %v\n", err)
		return exitUsage
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
	s, err := runRandom(e.stdout, o)
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun random: %v\n", err)
		return exitProblem
	}
	fmt.Fprintln(e.stdout, s.line(o))
	if len(s.failures) > 0 {
		return exitProblem
	}
	return exitOK
}

func (s randomSummary) line(o randomOptions) string {
	var known []string
	for id, n := range s.known {
		known = append(known, fmt.Sprintf("%s=%d", id, n))
	}
	sort.Strings(known)
	k := "none"
	if len(known) > 0 {
		k = strings.Join(known, " ")
	}
	return fmt.Sprintf("random: design %s, backend %s, %d runs x %d steps from seed %d: %d agreed, %d failed; stopped at known divergences: %s",
		o.design, o.backend, s.runs, o.steps, o.seed, s.agreed, len(s.failures), k)
}

// runRandom runs the campaign; w receives progress and failures.
func runRandom(w io.Writer, o randomOptions) (randomSummary, error) {
	s := randomSummary{known: map[string]int{}}
	d, err := model.DesignByName(o.design)
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
	gen := sim.GenOptions{Power: o.backend == sim.BackendCrashFS}
	for i := 0; i < o.runs; i++ {
		seed := uint64(o.seed + i)
		ops := sim.Generate(seed, o.steps, d, b, gen)
		run := func(ops []spec.Op) error {
			cfg := sim.Config{Backend: o.backend, Faults: o.faults, AnyViolation: true}
			if o.backend == sim.BackendOS {
				dir, err := os.MkdirTemp("", "xpwc-random-")
				if err != nil {
					return err
				}
				defer func() { _ = os.RemoveAll(dir) }()
				cfg.Dir = dir
			}
			return sim.RunOps(cfg, o.design, b, ops)
		}
		s.runs++
		err := run(ops)
		var kd *sim.KnownDivergenceError
		switch {
		case err == nil:
			s.agreed++
			if o.verbose {
				fmt.Fprintf(w, "seed %d: %d ops agreed\n", seed, len(ops))
			}
			continue
		case errors.As(err, &kd):
			s.known[kd.ID]++
			if o.verbose {
				fmt.Fprintf(w, "seed %d: %v\n", seed, err)
			}
			continue
		}
		sig := sim.Signature(err)
		small := sim.Shrink(ops,
			func(o []spec.Op) bool { return sim.Replayable(d, b, o) },
			func(o []spec.Op) bool { return sim.Signature(run(o)) == sig })
		final := run(small)
		if final == nil {
			// Not reproducible on the shrunk sequence (dropping ops moves
			// the injected faults to other calls): report the original run.
			small, final = ops, err
		}
		header := []string{
			fmt.Sprintf("Found by simrun random --seed %d --steps %d --runs 1 --design %s --backend %s%s,", seed, o.steps, o.design, o.backend, faultsFlag(o.faults)),
			fmt.Sprintf("shrunk from %d to %d ops by delta debugging. Failure:", len(ops), len(small)),
		}
		for _, l := range strings.Split(final.Error(), "\n") {
			header = append(header, "  "+l)
		}
		text, ferr := sim.FormatScenario(header, o.design, b, small)
		if ferr != nil {
			// The model cannot describe it (a harness error): keep the trace.
			text = "# " + strings.Join(header, "\n# ") + "\n# (not replayable: " + ferr.Error() + ")\n" + spec.FormatTrace(small)
		}
		path := filepath.Join(o.out, fmt.Sprintf("random-%s-seed%d.scenario", o.design, seed))
		if werr := os.WriteFile(path, []byte(text), 0o644); werr != nil {
			return s, werr
		}
		s.failures = append(s.failures, path)
		fmt.Fprintf(w, "seed %d: FAIL: %v\n  shrunk to %d ops: %s\n", seed, err, len(small), path)
	}
	return s, nil
}

func faultsFlag(f string) string {
	if f == "" {
		return ""
	}
	return fmt.Sprintf(" --faults '%s'", f)
}
