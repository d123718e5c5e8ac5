package main

import (
	"flag"
	"fmt"
	"slices"
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
