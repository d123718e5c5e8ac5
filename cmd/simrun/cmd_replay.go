package main

import "fmt"

// cmdReplay is not written yet; it says so instead of pretending to work.
func cmdReplay(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "simrun replay: not implemented yet")
	return exitProblem
}
