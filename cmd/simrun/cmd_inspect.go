package main

import "fmt"

// cmdInspect is not written yet; it says so instead of pretending to work.
func cmdInspect(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "simrun inspect: not implemented yet")
	return exitProblem
}
