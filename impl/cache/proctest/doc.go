// Package proctest runs real processes against one cache path (G6, G2):
// the test binary re-executes itself as child processes (the environment
// variable ChildEnv selects the child role), each child launches programs
// through impl/runtime on the shared path and reports every launch as one
// JSON line, and the parent kills some children with SIGKILL on the way.
//
// The parent then checks that every reported output equals the heap run's,
// that no child died of anything but the parent's SIGKILL (a SIGBUS or a
// Go fatal error is a failure), that the launches followed the lock
// protocol of docs/locking.md (read from each launch's cache statistics),
// and that the file loads afterwards. docs/concurrency.md has the counts of
// a run and the commands to reproduce one.
package proctest
