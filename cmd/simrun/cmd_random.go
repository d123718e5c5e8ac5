package main

import "fmt"

// cmdRandom is not written yet; it says so instead of pretending to work.
func cmdRandom(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "simrun random: not implemented yet")
	return exitProblem
}
