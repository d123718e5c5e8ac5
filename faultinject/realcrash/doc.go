// Package realcrash holds the tests that crash real processes on the OS
// filesystem: a child killed with SIGKILL at random points of its launches
// and saves, recovered by the parent (G1, G2, G3), and a cache file
// truncated by another process under a live mapping, which must surface as
// an error rather than kill the process.
//
// The tests re-execute their own binary as the child (TestMain dispatches on
// an environment variable). go test runs a handful of kills; XPWC_LONG=1
// runs hundreds. See docs/faults.md.
package realcrash

import (
	"fmt"

	"github.com/xpwc/xpwc/faultinject/crashpoint"
	"github.com/xpwc/xpwc/spec"
)

// KeysFor is the model of the child's i-th launch: the whole model under
// layout seed 1+i%3, so consecutive launches re-pack everything, append,
// commit and, as garbage grows, compact.
func KeysFor(i int) []spec.Key { return crashpoint.Keys(6, uint32(1+i%3)) }

// SavedLine is what the child prints after launch i returned with its
// commit done; the parent holds the child to it after the kill (G2).
func SavedLine(i int) string { return fmt.Sprintf("saved %d", i) }
