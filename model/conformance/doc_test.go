// Package conformance holds the real cache (impl/cache, v3 and v2, on the
// OS filesystem in a temporary directory or on faultinject/crashfs with
// power loss) to the lifecycle model step by step: gopter's
// commands generate random op sequences from the ops the model enables, run
// them on both in lockstep, and compare every result and, after every step,
// the model's projection with what the cache reports and what parsing its
// file shows.
//
// Default run: a few dozen sequences (seconds). Long run, documented in
// docs/model.md:
//
//	XPWC_CONFORMANCE_SEQS=100000 go test ./model/conformance -run Conformance -timeout 0
//
// XPWC_CONFORMANCE_SEED fixes gopter's seed (a failure prints it);
// XPWC_CONFORMANCE_DIR chooses the directory for cache files (a tmpfs makes
// fsync cheap).
package conformance
