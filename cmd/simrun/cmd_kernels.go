package main

import "fmt"

// cmdKernels is not written yet; it says so instead of pretending to work.
func cmdKernels(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "simrun kernels: not implemented yet")
	return exitProblem
}
