package main

import "fmt"

// cmdSuite is not written yet; it says so instead of pretending to work.
func cmdSuite(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "simrun suite: not implemented yet")
	return exitProblem
}
