// Package sim replays lifecycle scenarios in lockstep against the model
// (package model) and the real cache (package impl/cache), and generates
// random ones.
//
// A scenario is a datadriven file (github.com/cockroachdb/datadriven): one
// directive per lifecycle operation or environment event, in the text form of
// spec.Op, followed by "----" and the expected description of its result.
// Every directive is stepped first in the model, then performed on real
// cache instances (one per abstract process) sharing one cache path on a
// backend filesystem; the model's observable result and the cache's must be
// equal, and a difference is a *DivergenceError naming the step. The expected
// output is the model's description, so a rewrite (-rewrite) can never
// hide a divergence: it fails the run instead of landing in the file.
//
// The API in brief:
//
//	NewRunner(Config) (*Runner, error)       // one scenario run
//	(*Runner).Exec(line string) (string, error)
//	RunScenario(name, text string, Config) Report
//	Scenarios() ([]File, error)              // the embedded suite
//	Generate(seed, steps, design) []spec.Op  // random valid ops (gopter's draw)
//	Shrink(ops, fails) []spec.Op             // delta debugging
//	CheckSeed(cfg, d, b, seed, steps, found) Checked
//	                                         // the lockstep property as gopter's
//	                                         // commands on one seed: simrun random
//	                                         // and model/conformance's property
//	V2Design, V2Allow                        // v2 in lockstep (`format v2`)
//
// docs/scenarios.md describes the language, the backends and every
// scenario file.
package sim
