//go:build linux

package realcrash

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/crashpoint"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
)

// readFaulting reads every page of b under debug.SetPanicOnFault and turns
// a memory fault into an error.
func readFaulting(b []byte) (sum byte, err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			re, ok := r.(runtime.Error)
			if !ok {
				panic(r)
			}
			err = re
		}
	}()
	for i := 0; i < len(b); i += 4096 {
		sum += b[i]
	}
	return sum, nil
}

// truncateByOtherProcess shrinks path from a separate process (this test
// binary in its truncating mode), as a foreign writer would.
func truncateByOtherProcess(t *testing.T, path string, size int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envTruncate+"="+path, fmt.Sprintf("XPWC_REALCRASH_SIZE=%d", size))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

// childTruncate truncates path to the size in XPWC_REALCRASH_SIZE.
func childTruncate(path string) int {
	var size int64
	if _, err := fmt.Sscan(os.Getenv("XPWC_REALCRASH_SIZE"), &size); err != nil {
		return childFail(2, "size: %v", err)
	}
	if err := os.Truncate(path, size); err != nil {
		return childFail(3, "truncate: %v", err)
	}
	return 0
}

// The mechanism: a mapping whose file another process truncated faults on
// access; under SetPanicOnFault that is a recoverable error carrying the
// address, not the death of the process.
func TestTruncatedMappingIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, make([]byte, 3*4096), 0o644))
	f, err := vfs.OS().OpenFile(path, os.O_RDONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	m, err := f.Map(0, 3*4096, vfs.ProtRead)
	require.NoError(t, err)
	defer m.Close()
	_, err = readFaulting(m.Bytes())
	require.NoError(t, err)

	truncateByOtherProcess(t, path, 4096)
	_, err = readFaulting(m.Bytes())
	require.Error(t, err)
	var addr interface{ Addr() uintptr }
	require.True(t, errors.As(err, &addr), "the fault error carries the address: %v", err)
	t.Logf("read of a truncated mapping: %v", err)
}

// childMapRead loads the cache in dir (mapping the file), waits until the
// parent has truncated the file, then looks every key up. The cache checks
// data on first use by reading the mapping; a fault there must become a
// miss or a recorded error, not the death of this process.
func childMapRead(dir string) int {
	// The check at the look-up, after the truncation: with the default
	// policy the prefault walk may check the entries before it, and a
	// change after an entry's check is out of G1's reach by design
	// (spec.Packing.LateCorrupt).
	opts := cache.Options{Path: filepath.Join(dir, "model.xpwc"), FS: vfs.OS(), VerifyData: cache.VerifyOnFirstUse}
	c, err := cache.Open(opts)
	if err != nil {
		return childFail(3, "open: %v", err)
	}
	if err := c.InitializeForProgram("model"); err != nil {
		return childFail(3, "init: %v", err)
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return childFail(3, "stdin: %v", err)
	}
	hits := 0
	for _, k := range KeysFor(0) {
		if _, hit := c.LookUp(k); hit {
			hits++
		}
	}
	fmt.Printf("survived hits=%d\n", hits)
	return 0
}

// A cache file truncated by another process under the cache's live mapping
// must give an error (a miss, a recorded reason), never kill the process
// with SIGBUS.
func TestCacheSurvivesForeignTruncation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.xpwc")
	r, err := crashpoint.Launch(vfs.OS(), cache.Options{Path: path}, KeysFor(0))
	require.NoError(t, err)
	require.True(t, r.Committed)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envMapRead+"="+dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	require.True(t, sc.Scan(), "child: %s", stderr.String())
	require.Equal(t, "ready", sc.Text())

	truncateByOtherProcess(t, path, 4096) // only the header page stays
	_, err = fmt.Fprintln(stdin, "go")
	require.NoError(t, err)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the cache process died of %v after a foreign truncation (want an error, not a crash)", ws.Signal())
	}
	require.NoError(t, err, stderr.String())
	require.Len(t, lines, 1)
	assert.Equal(t, "survived hits=0", lines[0], "truncated entries must not hit")
}
