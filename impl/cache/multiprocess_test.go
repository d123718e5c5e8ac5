//go:build unix

package cache_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// The child side of the multi-process tests: the test binary re-executed
// with XPWC_CACHE_CHILD=<path>. It runs launches on the path, alternating two
// kernel versions (seeds) so that processes keep invalidating each other's
// entries, and checks every byte it is handed (G1). A failure or a SIGBUS
// makes the child exit non-zero.
func TestMultiProcessChild(t *testing.T) {
	path := os.Getenv("XPWC_CACHE_CHILD")
	if path == "" {
		t.Skip("runs only as a child of TestG6MultiProcess")
	}
	id, _ := strconv.Atoi(os.Getenv("XPWC_CACHE_CHILD_ID"))
	launches, _ := strconv.Atoi(os.Getenv("XPWC_CACHE_CHILD_LAUNCHES"))
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	for i := range launches {
		seed := uint32(1 + rng.IntN(2))
		opts := cache.Options{Path: path, LockWait: time.Duration(rng.IntN(2)) * 50 * time.Millisecond}
		c, err := cache.Open(opts)
		require.NoError(t, err)
		launch(t, c, "P"+strconv.Itoa(i), keys(12, seed)) // checks bytes
		if rng.IntN(3) == 0 {
			if err := c.Compact(); err != nil {
				require.ErrorIs(t, err, cache.ErrLockBusy) // another writer
			}
		}
		require.NoError(t, c.Check())
		require.NoError(t, c.Close())
	}
}

func startChildren(t *testing.T, path string, n, launches int) ([]*exec.Cmd, []*bytes.Buffer) {
	t.Helper()
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMultiProcessChild$", "-test.count=1")
		cmd.Env = append(os.Environ(),
			"XPWC_CACHE_CHILD="+path,
			"XPWC_CACHE_CHILD_ID="+strconv.Itoa(i),
			"XPWC_CACHE_CHILD_LAUNCHES="+strconv.Itoa(launches))
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	return cmds, outs
}

// checkConverges shows the file is healthy after the children: it loads or
// is rejected with a typed error (never a crash), and two more launches
// converge (G3).
func checkConverges(t *testing.T, path string) {
	t.Helper()
	ks := keys(12, 1)
	s := process(t, cache.Options{Path: path}, ks)
	require.NotEqual(t, spec.LoadFailed, s.Load, "%v", s.LoadErr)
	s = process(t, cache.Options{Path: path}, ks)
	require.Equal(t, uint64(len(ks)), s.Hits)
}

// G6 (processes): concurrent processes on one cache path never corrupt the
// file, never hand out wrong bytes and never take a SIGBUS.
func TestG6MultiProcess(t *testing.T) {
	if os.Getenv("XPWC_CACHE_CHILD") != "" {
		t.Skip()
	}
	path := tempPath(t)
	cmds, outs := startChildren(t, path, 4, 6)
	for i, cmd := range cmds {
		err := cmd.Wait()
		require.NoError(t, err, "child %d: %s", i, outs[i])
	}
	checkConverges(t, path)
}

// G2 (process crash): children killed with SIGKILL at random moments, in the
// middle of packing or committing, leave a file whose committed state loads.
func TestG2MultiProcessKill(t *testing.T) {
	if os.Getenv("XPWC_CACHE_CHILD") != "" {
		t.Skip()
	}
	path := tempPath(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 3 {
		cmds, outs := startChildren(t, path, 3, 20)
		time.Sleep(time.Duration(20+rng.IntN(60)) * time.Millisecond)
		require.NoError(t, cmds[rng.IntN(len(cmds))].Process.Signal(syscall.SIGKILL))
		for i, cmd := range cmds {
			err := cmd.Wait()
			if err == nil {
				continue
			}
			ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			require.True(t, ok)
			require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL,
				"round %d child %d: %v: %s", round, i, fmt.Sprint(err), outs[i])
		}
		checkConverges(t, path)
	}
	_ = spec.FormatV3
}
