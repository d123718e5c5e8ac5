package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
)

// newFlagSet returns the flag set of one subcommand: errors and usage go to
// e.stderr, and usage prints the synopsis lines before the flags, so every
// subcommand answers a usage error the same way (exit 2).
func newFlagSet(e *env, name string, synopsis ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		for i, s := range synopsis {
			if i == 0 {
				s = "usage: " + s
			}
			fmt.Fprintln(e.stderr, s)
		}
		fs.PrintDefaults()
	}
	return fs
}

// parseInterspersed parses flags that may come before, between or after
// positional arguments (package flag stops at the first positional one).
// Arguments listed in literal are positional even when they look like
// flags.
func parseInterspersed(fs *flag.FlagSet, args []string, literal ...string) ([]string, bool) {
	var pos []string
	for len(args) > 0 {
		if slices.Contains(literal, args[0]) {
			pos = append(pos, args[0])
			args = args[1:]
			continue
		}
		if err := fs.Parse(args); err != nil {
			return nil, false
		}
		args = fs.Args()
		if len(args) > 0 && !slices.Contains(literal, args[0]) {
			pos = append(pos, args[0])
			args = args[1:]
		}
	}
	return pos, true
}

// usageError prints "simrun CMD: MSG" on stderr and returns exitUsage, so
// every command names what was wrong with its arguments the same way.
func usageError(e *env, cmd, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "simrun %s: %s\n", cmd, fmt.Sprintf(format, args...))
	return exitUsage
}

// extraArgs returns exitUsage after the usage and a line naming the first
// argument cmd takes none of, or -1 when there is none.
func extraArgs(e *env, fs *flag.FlagSet, cmd string) int {
	if fs.NArg() == 0 {
		return -1
	}
	fs.Usage()
	return usageError(e, cmd, "unexpected argument %q", fs.Arg(0))
}

// intRange is one integer flag's value and its allowed range.
type intRange struct {
	flag    string
	v       int64
	lo, hi  int64
	hasHigh bool
}

// checkRanges returns exitUsage after naming the first flag whose value is
// out of its range, with the range; -1 when all are in range.
func checkRanges(e *env, cmd string, rs ...intRange) int {
	for _, r := range rs {
		switch {
		case r.v < r.lo && !r.hasHigh:
			return usageError(e, cmd, "--%s %d is out of range (want at least %d)", r.flag, r.v, r.lo)
		case r.v < r.lo || r.hasHigh && r.v > r.hi:
			return usageError(e, cmd, "--%s %d is out of range (want %d to %d)", r.flag, r.v, r.lo, r.hi)
		}
	}
	return -1
}

// atLeast and between build intRanges.
func atLeast(flag string, v, lo int64) intRange { return intRange{flag: flag, v: v, lo: lo} }
func between(flag string, v, lo, hi int64) intRange {
	return intRange{flag: flag, v: v, lo: lo, hi: hi, hasHigh: true}
}

// isHelp reports whether args ask for a command's help.
func isHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help", "--h":
			return true
		case "--":
			return false
		}
	}
	return false
}

// closest returns the command name nearest to s (edit distance at most 2,
// or s a prefix of it), or "".
func closest(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if strings.HasPrefix(n, s) && len(s) >= 2 {
			return n
		}
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
