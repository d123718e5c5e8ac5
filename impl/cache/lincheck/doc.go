// Package lincheck checks that the cache is linearizable under concurrent
// goroutines (G6): a workload of N clients drives one cache (directly or
// through the per-path Manager), a Recorder timestamps every call and return
// with one logical clock, and porcupine checks the history against Model, a
// sequential specification of the cache's observable behaviour.
//
// Model is a projection of package model onto one process and its cache
// instances (a relaunch closes one and opens the next; a power cut drops
// them all and keeps what was durable; a second process may load the file
// beside it): model.Step tracks one launch per process with one look-up per
// name, while here many goroutines look up, insert and release the same names
// at once. The transitions it mirrors are cited where they are defined
// (model/step_ops.go: lookUp, reserve, insert, finalize, save, unload).
//
// The API in brief:
//
//	NewModel(cfg) porcupine.Model              // the sequential spec
//	NewRecorder(); r.Call(client, in).Return(out); r.History()
//	Run(ctx, target, workload, rec) []error    // the concurrent workload
//	NewProcess(manager, opts)                  // a Target that relaunches
//	Check(model, history, opts) (Report, error) // porcupine with a timeout
//
// docs/concurrency.md describes what is checked, the partitions, measured
// history sizes and check times, and how to reproduce a run.
package lincheck
