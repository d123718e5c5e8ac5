package main

import "fmt"

// cmdLaunch is not written yet; it says so instead of pretending to work.
func cmdLaunch(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "simrun launch: not implemented yet")
	return exitProblem
}
