package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/xpwc/xpwc/conform"
)

// cmdConform checks a cache implementation in any language against the
// model: it starts the adapter command, speaks the JSON-lines protocol of
// docs/conform.md to it, replays the scenario suite through it and reports
// which guarantees and invariants hold, break or are not claimed.
func cmdConform(e *env, args []string) int {
	fs := newFlagSet(e, "conform", "simrun conform --exec 'CMD ARGS' [--json] [--timeout DURATION] [--out DIR]",
		"                      [--walks N] [--steps N] [--seed S] [--names N] [--explore]",
		"  runs the scenario suite and seeded random walks through an adapter speaking docs/conform.md's protocol")
	execCmd := fs.String("exec", "", "the adapter command and its arguments, split on white space")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	timeout := fs.Duration("timeout", conform.DefaultTimeout, "the longest the adapter may take to answer one request")
	out := fs.String("out", "", "write each failure's shrunk trace as a scenario file into this directory")
	walks := fs.Int("walks", 20, "model-guided random walks after the scenarios")
	steps := fs.Int("steps", 40, "ops per random walk")
	seed := fs.Uint64("seed", 1, "seed of the first random walk (walk i uses seed+i)")
	names := fs.Int("names", 2, "names (packed weights) in the random walks, 1 to 3")
	exploreFlag := fs.Bool("explore", false, "also run the explorer's shortest trace to each design variant's known bug, held to the reference")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 0 {
		return usageError(e, "conform", "unexpected argument %q", fs.Arg(0))
	}
	if *walks < 0 || *steps < 1 || *names < 1 || *names > 3 {
		return usageError(e, "conform", "--walks must be at least 0, --steps at least 1, --names 1 to 3")
	}
	cmd, err := conform.ParseCommand(*execCmd)
	if err != nil {
		return usageError(e, "conform", "--exec is required: %v", err)
	}
	if *timeout <= 0 {
		return usageError(e, "conform", "--timeout must be positive")
	}
	cmd.Timeout = *timeout
	if *out != "" {
		if fi, err := os.Stat(*out); err != nil || !fi.IsDir() {
			return usageError(e, "conform", "--out %s: not a directory (create it first)", *out)
		}
	}
	start := time.Now()
	rep, err := conform.Run(conform.Options{Command: cmd, OutDir: *out, Explore: *exploreFlag, Walks: *walks, Steps: *steps, Seed: *seed, Names: *names})
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun conform: %v\n", err)
		return exitProblem
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(e.stderr, "simrun conform: %v\n", err)
			return exitProblem
		}
	} else {
		printConform(e, rep, time.Since(start))
	}
	if !rep.OK() {
		return exitProblem
	}
	return exitOK
}

func printConform(e *env, rep *conform.Report, took time.Duration) {
	a := rep.Adapter
	fmt.Fprintf(e.stdout, "adapter %s (protocol %d, format %q): %s\n\n", a.Name, a.Protocol, a.Format, strings.Join(a.Capabilities, " "))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	count := map[string]int{}
	for _, s := range rep.Scenarios {
		count[s.Verdict]++
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Verdict, s.Name, conformNote(s))
	}
	_ = tw.Flush()
	fmt.Fprintln(e.stdout)
	for _, c := range rep.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.ID, c.Verdict, strings.Join(c.By, " "))
	}
	_ = tw.Flush()
	fmt.Fprintf(e.stdout, "\n%d held, %d broken, %d protocol faults, %d not claimed, %d skipped in %.1fs\n",
		count[conform.Holds], count[conform.Broken], count[conform.Fault], count[conform.NotClaimed], count[conform.Skipped], took.Seconds())
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// conformNote is the last column of a run's line: what it broke and why,
// with what it behaves like, or what it needs, and how far it ran.
func conformNote(s conform.ScenarioResult) string {
	var w []string
	if s.Cut() {
		w = append(w, fmt.Sprintf("ran %d of %d steps", s.Steps, s.Of))
	}
	if len(s.Missing) > 0 {
		w = append(w, "needs "+strings.Join(s.Missing, ", "))
	}
	if s.Verdict != conform.Broken {
		if len(w) == 0 {
			return s.Reason
		}
		return strings.Join(w, "; ")
	}
	if len(s.Broke) > 0 {
		w = append(w, "breaks "+strings.Join(s.Broke, " "))
	} else {
		w = append(w, "breaks no invariant: "+s.Uncovered)
	}
	like := "behaves like " + orNone(s.Like)
	if len(s.LikeBreaks) > 0 {
		like += " (which breaks " + strings.Join(s.LikeBreaks, " ") + ")"
	}
	w = append(w, like, fmt.Sprintf("shrunk to %d ops %s", s.Shrunk, s.File))
	note := strings.Join(w, "; ")
	for _, f := range s.Evidence {
		note += "\n\t\t" + string(f.ID) + ": " + f.Why
	}
	return note + "\n\t\t" + strings.ReplaceAll(s.Reason, "\n", "\n\t\t")
}
