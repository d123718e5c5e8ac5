//go:build unix

package proctest_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/cache/proctest"
	"github.com/xpwc/xpwc/impl/runtime"
	"github.com/xpwc/xpwc/spec"
)

// herdKernels are three kernels of different layouts: a herd that mixes
// them keeps invalidating the others' entries, as a kernel upgrade rolling
// out while old processes still start does.
var herdKernels = []string{"f32-goi-nr16", "f32-goi-nr8", "qc8w-goi-nr16"}

// herdPlan is the size of TestHerdOnOnePath; XPWC_LONG=1 runs the long
// one: 100 herds of 12 processes, 2 launches each (2,400 launches).
func herdPlan() plan {
	if os.Getenv("XPWC_LONG") == "1" {
		return plan{rounds: 100, children: 12, launches: 2, kills: 3}
	}
	return plan{rounds: 3, children: 8, launches: 2, kills: 2}
}

// TestHerdOnOnePath: herds of processes start at once on one cache path
// with the default lock wait, each launching programs with three kernels
// mixed, a quarter of them SIGKILLed at a random moment (in their process
// start, a load, a pack, a commit, inference). Every finished launch
// equals the heap run's output and followed docs/locking.md; after each
// herd the file parses and checks clean; at the end it converges and a
// further round of launches leaves it the same size (G2, G3, G4, G6).
//
//	go test ./impl/cache/proctest -run HerdOnOnePath -v               # 3 herds of 8
//	XPWC_LONG=1 go test ./impl/cache/proctest -run HerdOnOnePath -v   # 100 herds of 12
func TestHerdOnOnePath(t *testing.T) {
	pl := herdPlan()
	want := heapDigests(t, herdKernels...)
	path := filepath.Join(t.TempDir(), "herd.xpwc")
	exe, err := os.Executable()
	require.NoError(t, err)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))

	var n counts
	fallbacks := 0
	killWithin := 400 * time.Millisecond
	for round := range pl.rounds {
		kids := make([]*proctest.Child, pl.children)
		start := time.Now()
		for i := range kids {
			kids[i], err = proctest.Start(exe, proctest.Job{ID: round*100 + i, Path: path, Launches: pl.launches,
				Seed: seed + uint64(round), Kernels: strings.Join(herdKernels, "+")})
			require.NoError(t, err)
		}
		for _, i := range rng.Perm(pl.children)[:pl.kills] {
			c := kids[i]
			time.AfterFunc(time.Duration(rng.Int64N(int64(killWithin))), c.Kill)
		}
		shortest := time.Duration(math.MaxInt64)
		for _, c := range kids {
			o := c.Wait()
			require.NoError(t, o.Err)
			n.children++
			if o.Exit == proctest.ExitKilled {
				n.killed++
			} else {
				require.Len(t, o.Reports, pl.launches, "child %d finished without all its reports", o.Job.ID)
				shortest = min(shortest, time.Since(start))
			}
			for _, r := range o.Reports {
				checkReport(t, spec.FormatV3, r, want, &n)
				if r.HeapByReason[cache.HeapLockBusy] > 0 {
					fallbacks++
				}
			}
		}
		checkFileValid(t, path)
		// Kills drawn over 400 ms all came after the children had exited
		// on a fast machine (killed=0 in one run of three): the next herd
		// draws them within half the life of this one's shortest child.
		killWithin = min(killWithin, max(shortest/2, time.Millisecond))
	}
	t.Logf("herds=%d processes=%d killed=%d launches=%d heap-fallbacks=%d (locked at load %d, busy at a reservation %d) warm=%d wrote=%d",
		pl.rounds, n.children, n.killed, n.launches, fallbacks, n.locked, n.busy, n.warm, n.wrote)
	require.Positive(t, n.killed, "no process was killed")

	checkFileAfter(t, spec.FormatV3, path, want)
	// a and b have disjoint names (c replaces a's entries): once each has
	// launched, more launches of both hit everything and add no byte.
	var size int64
	for pass := range 3 {
		for _, name := range []string{"a", "b"} {
			p, err := proctest.Program(name)
			require.NoError(t, err)
			rep, err := runtime.Launch(context.Background(), runtime.LaunchConfig{CachePath: path, Program: p, Verify: true})
			require.NoError(t, err)
			require.True(t, rep.Verified)
			if pass > 0 {
				require.Zero(t, rep.Misses, "%s missed after convergence", name)
			}
		}
		if pass == 0 {
			size = fileSize(t, path)
		}
	}
	require.Equal(t, size, fileSize(t, path), "the file grew after it converged (G4)")
}

// checkFileValid: the file a herd left, if any, is a v3 file whose newest
// commit parses, and the cache's own check passes on it without writing.
func checkFileValid(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return // every writer was killed before its first commit
	}
	require.NoError(t, err)
	fi, err := f.Stat()
	require.NoError(t, err)
	_, err = spec.ParseV3(f, fi.Size())
	require.NoError(t, err, "the file after a herd")
	require.NoError(t, f.Close())
	c, err := cache.Open(cache.Options{Path: path, ReadOnly: true})
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("check"))
	require.Equal(t, spec.LoadOK, c.Stats().Load)
	require.NoError(t, c.Check())
	require.NoError(t, c.Close())
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}
