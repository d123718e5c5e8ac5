package main

import "fmt"

// cmdBench is not written yet; it says so instead of pretending to work.
func cmdBench(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "simrun bench: not implemented yet")
	return exitProblem
}
