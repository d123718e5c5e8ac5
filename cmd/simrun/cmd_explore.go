package main

import "fmt"

// cmdExplore is not written yet; it says so instead of pretending to work.
func cmdExplore(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "simrun explore: not implemented yet")
	return exitProblem
}
