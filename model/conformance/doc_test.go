// Package conformance holds the real cache (impl/cache) to the lifecycle
// model step by step. Its property, TestConformance, is gopter's commands
// (sim.CheckSeed): sequences of sim's operations drawn from the ops the
// model enables, run through sim's lockstep world on crashfs (with power
// loss) and on the OS filesystem; a failure, shrunk by gopter and then by
// sim's delta debugging, is written as a scenario file that `simrun
// replay` reproduces. The
// v2 property, TestConformanceV2, is the same run with the caches writing
// v2, held to ExecuTorch's trailer design (sim/v2.go).
//
// Default run: a few hundred sequences (seconds). Long run, documented in
// docs/model.md:
//
//	XPWC_CONFORMANCE_SEQS=100000 go test ./model/conformance -run Conformance -timeout 0
//
// XPWC_CONFORMANCE_SEED fixes the first seed (a failure names its own).
package conformance
