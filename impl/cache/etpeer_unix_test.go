//go:build unix

package cache_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// The ExecuTorch peer of the tests below: the test binary re-executed with
// XPWC_ET_PEER=writer|probe and XPWC_ET_PATH. It does to the data file what
// ExecuTorch's cache does (docs/locking.md):
//
//   - writer: open_locked, open(O_RDWR|O_CREAT, 0600) and
//     flock(LOCK_EX|LOCK_NB), as before a fresh write; it holds the lock
//     until its stdin closes. Exit 2 if the lock was refused.
//   - probe: the same flock(LOCK_EX|LOCK_NB), released at once; exit 0 if
//     it was granted (a fresh write would now truncate the file), 3 if it
//     was refused.
func TestETPeerChild(t *testing.T) {
	mode, path := os.Getenv("XPWC_ET_PEER"), os.Getenv("XPWC_ET_PATH")
	if mode == "" {
		t.Skip("runs only as the ExecuTorch peer of the data-file lock tests")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		os.Exit(4)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case mode == "probe" && err == nil:
		os.Exit(0)
	case errors.Is(err, syscall.EWOULDBLOCK):
		os.Exit(map[string]int{"probe": 3, "writer": 2}[mode])
	case err != nil:
		os.Exit(4)
	}
	os.Stdout.WriteString("locked\n")
	_, _ = io.Copy(io.Discard, os.Stdin) // hold until the parent closes stdin
	os.Exit(0)
}

// peerOutput is the peer's standard output, which exec's copying goroutine
// writes while the test polls it.
type peerOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *peerOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *peerOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// etPeer runs the peer in mode on path and returns it started.
func etPeer(t *testing.T, mode, path string) (*exec.Cmd, io.WriteCloser, *peerOutput) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestETPeerChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "XPWC_ET_PEER="+mode, "XPWC_ET_PATH="+path)
	out := &peerOutput{}
	cmd.Stdout = out
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	return cmd, stdin, out
}

// probeExclusive reports whether an ExecuTorch writer could take the data
// file now: true means its fresh write would truncate the file.
func probeExclusive(t *testing.T, path string) bool {
	t.Helper()
	cmd, stdin, _ := etPeer(t, "probe", path)
	_ = stdin.Close()
	err := cmd.Wait()
	if err == nil {
		return true
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 3, ee.ExitCode(), "peer failed")
	return false
}

// An ExecuTorch writer holding LOCK_EX on the data file: a launch reads and
// writes nothing of it, packs to heap with reason lock-busy, and the file
// keeps every byte.
func TestETWriterHoldingDataFile(t *testing.T) {
	if os.Getenv("XPWC_ET_PEER") != "" {
		t.Skip()
	}
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(3, 1)
	process(t, opts, ks[:2])
	before, err := os.ReadFile(opts.Path)
	require.NoError(t, err)

	cmd, stdin, out := etPeer(t, "writer", opts.Path)
	deadline := time.Now().Add(10 * time.Second)
	for out.String() == "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, "locked\n", out.String(), "the peer did not take the lock")

	s := process(t, opts, ks)
	require.Equal(t, spec.LoadLocked, s.Load)
	require.ErrorIs(t, s.LoadErr, cache.ErrLockBusy)
	require.Zero(t, s.Hits)
	require.Positive(t, s.HeapBytes[cache.HeapLockBusy])
	require.Zero(t, s.Commits)
	after, err := os.ReadFile(opts.Path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "the file changed under the peer's lock")

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	s = process(t, opts, ks)
	require.Equal(t, uint64(2), s.Hits, "usable again once the peer is gone")
}

// While an xpwc process has the data file mapped, and while it appends to
// it, an ExecuTorch writer's flock(LOCK_EX|LOCK_NB) on the data file fails,
// so ExecuTorch packs to heap instead of truncating the file under the
// mappings. Once the cache is closed the peer gets the lock again (the
// probe can say yes).
func TestETWriterLockedOutWhileMapped(t *testing.T) {
	if os.Getenv("XPWC_ET_PEER") != "" {
		t.Skip()
	}
	// Compaction off: a compaction renames a new file this process does
	// not map (it keeps the old inode), so no lock of its stays on it
	// (docs/locking.md); this test is about the file it maps.
	opts := cache.Options{Path: tempPath(t), CompactGarbageRatio: -1}
	ks := keys(3, 1)
	process(t, opts, ks[:2])

	// Loaded and mapped: the descriptor is closed, the mappings keep its lock.
	c, err := cache.Open(opts)
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("P"))
	for _, k := range ks[:2] {
		_, hit := pack(t, c, k)
		require.True(t, hit)
	}
	require.False(t, probeExclusive(t, opts.Path), "peer took the lock of a mapped file")

	// Appending: a miss reserves in the live file.
	_, hit := pack(t, c, ks[2])
	require.False(t, hit)
	require.False(t, probeExclusive(t, opts.Path), "peer took the lock of a file being appended to")
	require.NoError(t, c.Finalize())
	require.False(t, probeExclusive(t, opts.Path), "peer took the lock after the commit")
	require.NoError(t, c.Check())
	require.NoError(t, c.Close())

	require.True(t, probeExclusive(t, opts.Path), "no lock is left once the cache is closed")
}

// A new file published by rename carries the lock from the start: a cold
// launch's file is locked before any other process can open it by name.
func TestETWriterLockedOutOfNewFile(t *testing.T) {
	if os.Getenv("XPWC_ET_PEER") != "" {
		t.Skip()
	}
	opts := cache.Options{Path: tempPath(t)}
	c, err := cache.Open(opts)
	require.NoError(t, err)
	launch(t, c, "P", keys(2, 1))
	require.False(t, probeExclusive(t, opts.Path))
	require.NoError(t, c.Close())
}
