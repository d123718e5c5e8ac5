//go:build linux

package realcrash

import (
	"fmt"
	"os"
	"testing"
)

// Child modes, selected by environment variable so that the test binary
// can be its own child process.
const (
	envSaveLoop = "XPWC_REALCRASH_SAVELOOP" // dir: launch and save forever
	envMapRead  = "XPWC_REALCRASH_MAPREAD"  // dir: load, wait for a truncation, read
	envTruncate = "XPWC_REALCRASH_TRUNCATE" // path: truncate it (a foreign process)
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(envSaveLoop); dir != "" {
		os.Exit(childSaveLoop(dir))
	}
	if dir := os.Getenv(envMapRead); dir != "" {
		os.Exit(childMapRead(dir))
	}
	if path := os.Getenv(envTruncate); path != "" {
		os.Exit(childTruncate(path))
	}
	os.Exit(m.Run())
}

func childFail(code int, format string, args ...any) int {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	return code
}
