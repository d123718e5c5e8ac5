package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/xpwc/xpwc/conform"
	"github.com/xpwc/xpwc/sim"
)

// cmdReplay replays scenario files in lockstep against the model and the
// cache (docs/scenarios.md). Each file runs on every backend it supports,
// or on the one --backend names.
func cmdReplay(e *env, args []string) int {
	fs := newFlagSet(e, "replay", "simrun replay [-v] [--rewrite] [--backend NAME] [--exec 'CMD ARGS'] FILE|DIR|embedded ...",
		"  embedded (or --embedded) replays the scenario suite compiled into simrun;",
		"  --exec replays on the OS filesystem through an adapter process (docs/conform.md) instead of xpwc's cache")
	verbose := fs.Bool("v", false, "print every step with the model's state and the cache's observable state")
	backend := fs.String("backend", "", "run only on this backend: crashfs, os or model (default: every backend a file supports)")
	execCmd := fs.String("exec", "", "replay through this adapter command (docs/conform.md), on the os backend only")
	rewrite := fs.Bool("rewrite", false, "write the outputs into the files (not embedded ones) where they differ; refused for a file with a divergence or an error")
	paths, ok := parseInterspersed(fs, args, "embedded", "--embedded")
	if !ok {
		return exitUsage
	}
	if len(paths) == 0 {
		fs.Usage()
		return usageError(e, "replay", "a FILE, DIR or embedded is required")
	}
	switch sim.Backend(*backend) {
	case "", sim.BackendCrashFS, sim.BackendOS, sim.BackendModel:
	default:
		fmt.Fprintf(e.stderr, "simrun replay: unknown backend %q\n", *backend)
		return exitUsage
	}
	// base is the configuration of every run but its backend and trace:
	// through an adapter, the one conform runs with for what it claims (a
	// file in a format of its own is not read as v3).
	var base sim.Config
	if *execCmd != "" {
		cmd, err := conform.ParseCommand(*execCmd)
		if err != nil {
			return usageError(e, "replay", "%v", err)
		}
		cl, err := conform.Start(cmd)
		if err != nil {
			fmt.Fprintf(e.stderr, "simrun replay: %v\n", err)
			return exitProblem
		}
		hello := cl.Hello()
		_ = cl.Close()
		base = conform.ReplayConfig(cmd, hello)
		base.AdoptCompaction = false // a scenario file names its commits' branches
	}
	open := base.Open
	config := func(b sim.Backend, trace io.Writer) sim.Config {
		c := base
		c.Backend, c.Trace = b, trace
		return c
	}
	var files []sim.File
	for _, p := range paths {
		var fl []sim.File
		var err error
		if p == "embedded" || p == "--embedded" {
			fl, err = sim.Scenarios()
		} else {
			fl, err = sim.ReadFiles(p)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "simrun replay: %v\n", err)
			return exitUsage
		}
		files = append(files, fl...)
	}
	if code := checkScenarios(e, files); code >= 0 {
		return code
	}
	var trace io.Writer
	if *verbose {
		trace = e.stdout
	}
	failed, ran := 0, 0
	for _, f := range files {
		backends, _ := sim.Backends(f.Text)
		for _, b := range backends {
			if *backend != "" && sim.Backend(*backend) != b || open != nil && b != sim.BackendOS {
				continue
			}
			ran++
			rep := sim.RunScenario(f, config(b, trace))
			if *rewrite && rep.Err == nil && len(rep.Mismatches) > 0 && f.Path != "" {
				if err := rewriteFile(f, rep); err != nil {
					fmt.Fprintf(e.stderr, "simrun replay: %v\n", err)
					return exitProblem
				}
				fmt.Fprintf(e.stdout, "rewrote %s (%d outputs)\n", f.Path, len(rep.Mismatches))
				f.Text, _ = readText(f.Path)
				rep = sim.RunScenario(f, config(b, nil))
			}
			printReport(e.stdout, rep)
			if !rep.OK() {
				failed++
			}
		}
	}
	fmt.Fprintf(e.stdout, "replay: %d runs, %d passed, %d failed\n", ran, ran-failed, failed)
	switch {
	case ran == 0:
		fmt.Fprintln(e.stderr, "simrun replay: no file runs on the chosen backend")
		return exitUsage
	case failed > 0:
		return exitProblem
	}
	return exitOK
}

// checkScenarios reads every file before any runs: a file that is not a
// scenario (binary data, a syntax error, an unknown verb, no directive at
// all) is bad input, named with its line on stderr once, not a failing
// run on each backend. It returns exitUsage if any file is bad, -1 if none.
func checkScenarios(e *env, files []sim.File) int {
	code := -1
	verbs := sim.Verbs()
	for _, f := range files {
		if err := checkScenario(f, verbs); err != nil {
			fmt.Fprintf(e.stderr, "simrun replay: %v\n", err)
			code = exitUsage
		}
	}
	return code
}

func checkScenario(f sim.File, verbs []string) error {
	if i := strings.IndexByte(f.Text, 0); i >= 0 || !utf8.ValidString(f.Text) {
		if i < 0 {
			i = invalidUTF8At(f.Text)
		}
		return fmt.Errorf("%s: not a scenario file: binary data at byte %d", f.Name, i)
	}
	ds, err := sim.ParseScenario(f.Text)
	var se *sim.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%s:%d: %s", f.Name, se.Line, se.Msg)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	for _, d := range ds {
		if err := sim.CheckDirective(d.Text); err != nil {
			verb := strings.Fields(d.Text)[0]
			if !slices.Contains(verbs, verb) {
				msg := fmt.Sprintf("unknown verb %q", verb)
				if s := closest(verb, verbs); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
				}
				return fmt.Errorf("%s:%d: %s", f.Name, d.Line, msg)
			}
			return fmt.Errorf("%s:%d: %v", f.Name, d.Line, err)
		}
	}
	if len(ds) == 0 {
		return fmt.Errorf("%s: no directives: a scenario with nothing to check is not run", f.Name)
	}
	return nil
}

// invalidUTF8At is the offset of the first byte of s that is not UTF-8.
func invalidUTF8At(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return i
			}
		}
	}
	return len(s)
}

func printReport(w io.Writer, rep sim.Report) {
	status := "ok"
	if !rep.OK() {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%-4s %-50s %-8s %3d directives\n", status, rep.Name, rep.Backend, rep.Steps)
	if rep.Err != nil {
		if id, ok := rep.Known(); ok {
			fmt.Fprintf(w, "     known divergence %s (docs/scenarios.md)\n", id)
		}
		fmt.Fprintf(w, "     %v\n", rep.Err)
	}
	for _, m := range rep.Mismatches {
		fmt.Fprintf(w, "     %s:%d: %q: output differs\n     want:\n%s\n     got:\n%s\n", rep.Name, m.Line, m.Directive, indent(m.Want), indent(m.Got))
	}
}

func indent(s string) string {
	return "       " + strings.ReplaceAll(s, "\n", "\n       ")
}

// rewriteFile writes the outputs of rep's mismatched directives into f.
func rewriteFile(f sim.File, rep sim.Report) error {
	got := map[int]string{}
	for _, m := range rep.Mismatches {
		got[m.Line] = m.Got
	}
	text, err := sim.Rewrite(f.Text, got)
	if err != nil {
		return err
	}
	return os.WriteFile(f.Path, []byte(text), 0o644)
}

func readText(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
