// Command simrun is how engineers use xpwc without writing Go: replay
// scenarios, explore a design of the model, launch a model against a cache
// file, inspect a cache file, and benchmark. See docs/simrun.md.
//
// Exit codes: 0 success; 1 the work ran and found a problem (a failing
// scenario, a violation, an invalid file); 2 bad usage or input it cannot
// read (a missing file, a file that is not a scenario).
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
)

const (
	exitOK      = 0
	exitProblem = 1
	exitUsage   = 2
	// exitInterrupted is the shell's code for a command ended by SIGINT.
	exitInterrupted = 130
)

// env carries what a subcommand may touch, so tests can run one in-process.
type env struct {
	stdout io.Writer
	stderr io.Writer
}

// stderrIsTerminal reports whether stderr reaches a person: progress that
// would clutter a log or a pipe is worth printing there.
func (e *env) stderrIsTerminal() bool {
	f, ok := e.stderr.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

type command struct {
	run  func(e *env, args []string) int
	help string
}

func commands() map[string]command {
	return map[string]command{
		"replay":  {cmdReplay, "replay scenario files against the model and the cache"},
		"explore": {cmdExplore, "explore a design of the lifecycle model exhaustively"},
		"random":  {cmdRandom, "random conformance runs of the cache against the model"},
		"kernels": {cmdKernels, "list the registered kernels with seed and fingerprint"},
		"inspect": {cmdInspect, "inspect a cache file"},
		"diff":    {cmdDiff, "compare two cache files entry by entry (SHA-256 of each entry's bytes)"},
		"launch":  {cmdLaunch, "launch a model against a cache file"},
		"bench":   {cmdBench, "benchmark cold and warm launches"},
		"herd":    {cmdHerd, "measure launches started at once, as processes, on one cache path"},
		"conform": {cmdConform, "check a cache in any language against the model through an adapter"},
	}
}

func main() {
	os.Exit(run(&env{stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:]))
}

func run(e *env, args []string) int {
	if len(args) == 0 {
		return cmdSuite(e, nil)
	}
	cmds := commands()
	if c, ok := cmds[args[0]]; ok {
		if isHelp(args[1:]) {
			// Asked for, help is output: stdout, exit 0. The flag set
			// prints it to its error stream, pointed at stdout here.
			c.run(&env{stdout: e.stdout, stderr: e.stdout}, []string{"-h"})
			return exitOK
		}
		return c.run(e, args[1:])
	}
	if args[0] == "version" || args[0] == "--version" {
		if len(args) > 1 {
			return usageError(e, "version", "unexpected argument %q", args[1])
		}
		fmt.Fprintln(e.stdout, version())
		return exitOK
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		switch {
		case len(args) > 2:
			return usageError(e, "help", "unexpected argument %q", args[2])
		case len(args) == 2:
			if c, ok := cmds[args[1]]; ok {
				c.run(&env{stdout: e.stdout, stderr: e.stdout}, []string{"-h"})
				return exitOK
			}
			unknownCommand(e, "simrun help", args[1], cmds)
			return exitUsage
		}
		usage(e.stdout, cmds)
		return exitOK
	}
	unknownCommand(e, "simrun", args[0], cmds)
	usage(e.stderr, cmds)
	return exitUsage
}

// unknownCommand names name, which is no command, on stderr, with the
// closest command when one is near.
func unknownCommand(e *env, prefix, name string, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	if s := closest(name, names); s != "" {
		fmt.Fprintf(e.stderr, "%s: unknown command %q; did you mean %q?\n", prefix, name, s)
	} else {
		fmt.Fprintf(e.stderr, "%s: unknown command %q\n", prefix, name)
	}
}

// version is the module version and VCS revision simrun was built from,
// as the build info records them: "(devel)" for a build from a clone, the
// revision and "+dirty" when the tree had changes.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "simrun: no build information"
	}
	v := "simrun " + bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v + " " + bi.GoVersion
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: simrun [command] [flags]")
	fmt.Fprintln(w, "with no command, runs the embedded scenario suite, a bounded exploration and a short random run")
	fmt.Fprintln(w, "simrun version (or --version) prints the module version and revision it was built from")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, cmds[n].help)
	}
}
