//go:build unix

package proctest_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/cache/proctest"
	"github.com/xpwc/xpwc/impl/runtime"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

func TestMain(m *testing.M) {
	if os.Getenv(proctest.ChildEnv) != "" {
		childFault()
	}
	proctest.ChildMain() // exits when this process is a child
	os.Exit(m.Run())
}

// plan is the size of a run; XPWC_LONG=1 runs the larger one.
type plan struct {
	rounds, children, launches, kills int
	killDelayUS                       int
}

func runPlan() plan {
	if os.Getenv("XPWC_LONG") == "1" {
		return plan{rounds: 30, children: 9, launches: 10, kills: 4, killDelayUS: 3000}
	}
	return plan{rounds: 4, children: 6, launches: 6, kills: 2, killDelayUS: 3000}
}

// heapDigests runs every program from heap packing: the outputs every
// file-backed launch must reproduce bit for bit.
// The map is keyed by program and kernel name; the kernels are
// proctest.Kernels unless named.
func heapDigests(t *testing.T, kernelNames ...string) map[string]uint64 {
	t.Helper()
	if len(kernelNames) == 0 {
		kernelNames = proctest.Kernels
	}
	out := map[string]uint64{}
	reg := kernels.NewRegistry()
	for _, name := range proctest.Programs {
		p, err := proctest.Program(name)
		require.NoError(t, err)
		for _, kn := range kernelNames {
			k, ok := reg.Lookup(kn)
			require.True(t, ok, kn)
			rep, err := runtime.Launch(context.Background(), runtime.LaunchConfig{Program: p, Kernel: k})
			require.NoError(t, err)
			require.Equal(t, spec.LoadDisabled, rep.Load)
			out[name+"/"+kn] = rep.OutputDigest
		}
	}
	require.NotEqual(t, out["a/"+proctest.Kernels[0]], out["c/"+proctest.Kernels[0]], "a and c must differ in their weights")
	return out
}

// patient is a lock wait longer than any writer holds the lock: such
// launches never fall back to heap.
const patient = 20 * time.Second

// counts tallies launches by what they did with the lock and the file.
type counts struct {
	launches, warm, wrote, locked, busy, busyDropped, deduped, commitBusy int
	children, killed, killedMidway, patient, rejected, terminated         int
}

// TestProcessesShareOnePath: children launch programs a, b, c on one cache
// path concurrently and repeatedly, some killed with SIGKILL on the way (G6,
// G2). Every launch's output equals the heap run's, no child dies of
// anything but our SIGKILL, every launch followed the lock protocol of
// docs/locking.md, and afterwards the file loads, checks clean and converges.
func TestProcessesShareOnePath(t *testing.T) {
	runProcesses(t, spec.FormatV3, "", runPlan())
}

// TestProcessesShareOnePathV2: the same with ExecuTorch's v2 format, which
// has no commit point and keys entries by concatenated name and seed only
// (docs/format.md). A kill between a writer's first append and its footer
// leaves a file the next load rejects and the next writer replaces by
// rename: loads may be "rejected", outputs must still be right. Program c
// is left out: v2 cannot tell its sources from a's under the same names,
// which is G1's documented v2 loss, not a concurrency matter.
func TestProcessesShareOnePathV2(t *testing.T) {
	pl := runPlan()
	pl.rounds = max(pl.rounds/2, 2)
	// Warm v2 launches of a and b take well under a millisecond: kill right
	// after the report, or the child is done before the signal comes.
	pl.killDelayUS = 0
	pl.kills, pl.launches = max(pl.kills, 4), max(pl.launches, 10)
	runProcesses(t, spec.FormatV2, "ab", pl)
}

// TestProcessesShareOnePathV2NoKill: without kills a v2 file is never left
// unreadable: every load is ok, missing or locked. (A launch whose insert
// found its entry in the newest commit used to leave the space it had
// appended after the footer, and the next load rejected the file.)
func TestProcessesShareOnePathV2NoKill(t *testing.T) {
	pl := runPlan()
	pl.rounds = max(pl.rounds/2, 2)
	pl.kills, pl.launches = 0, max(pl.launches, 10)
	n := runProcesses(t, spec.FormatV2, "ab", pl)
	require.Zero(t, n.rejected, "a v2 file became unreadable without any crash")
}

func runProcesses(t *testing.T, format spec.Format, programs string, pl plan) counts {
	want := heapDigests(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.xpwc")
	exe, err := os.Executable()
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	seed := rng.Uint64()
	t.Logf("seed %d (kill delays and job seeds derive from it)", seed)
	rng = rand.New(rand.NewPCG(seed, 2))

	var n counts
	for round := range pl.rounds {
		kids := make([]*proctest.Child, pl.children)
		for i := range kids {
			j := proctest.Job{ID: round*100 + i, Path: path, Launches: pl.launches, Seed: seed + uint64(round), Format: format, Programs: programs,
				Kernels: strings.Join(proctest.Kernels, "+")}
			// Three lock policies: do not wait (negative), the default
			// (0: about what packing the program costs, 50 ms here), wait
			// longer than any lock is held.
			j.LockWait = []time.Duration{-1, 0, patient}[i%3]
			kids[i], err = proctest.Start(exe, j)
			require.NoError(t, err)
		}
		// Kill some children on the way: after their k-th report (k at most
		// half their launches) and a random delay of up to 3 ms, so the
		// kill lands inside the next launch (its load, a pack, its commit,
		// inference) or just after it.
		for _, i := range rng.Perm(pl.children)[:pl.kills] {
			c, d := kids[i], time.Duration(rng.IntN(pl.killDelayUS+1))*time.Microsecond
			k := 1 + rng.IntN(max(pl.launches/2, 1))
			go func() {
				select {
				case <-c.Reported(k):
					time.Sleep(d)
					c.Kill()
				case <-c.Exited():
				}
			}()
		}
		for _, c := range kids {
			o := c.Wait()
			require.NoError(t, o.Err)
			n.children++
			if o.Exit == proctest.ExitKilled {
				n.killed++
				if len(o.Reports) > 0 {
					n.killedMidway++
				}
			} else {
				require.Len(t, o.Reports, pl.launches, "child %d finished without all its reports", o.Job.ID)
			}
			for _, r := range o.Reports {
				checkReport(t, format, r, want, &n)
				if o.Job.LockWait == patient {
					require.NotEqual(t, spec.LoadLocked, r.Load, "a launch waiting %v found the lock busy", patient)
					require.Zero(t, r.HeapByReason[cache.HeapLockBusy], "a launch waiting %v packed to heap", patient)
					require.False(t, r.CommitBusy)
					n.patient++
				}
			}
		}
	}
	t.Logf("children=%d killed=%d (after ≥1 launch: %d) launches=%d warm=%d wrote=%d locked=%d lock-busy=%d (committing drops: %d) deduped=%d commit-lock-busy=%d rejected=%d v2-terminating-commits=%d; launches waiting %v for the lock: %d, none fell back",
		n.children, n.killed, n.killedMidway, n.launches, n.warm, n.wrote, n.locked, n.busy, n.busyDropped, n.deduped, n.commitBusy, n.rejected, n.terminated, patient, n.patient)
	if pl.kills > 0 {
		require.Positive(t, n.killed, "no child was killed")
	}
	require.Positive(t, n.warm, "no launch hit everything")
	require.Positive(t, n.wrote, "no launch committed")

	checkFileAfter(t, format, path, want)
	return n
}

// checkReport checks one launch against the heap outputs and the lock
// protocol of docs/locking.md ("A busy lock", no wait or the default).
func checkReport(t *testing.T, format spec.Format, r proctest.Report, want map[string]uint64, n *counts) {
	t.Helper()
	n.launches++
	id := func() string {
		return r.Program + " child " + strconv.Itoa(r.Child) + " launch " + strconv.Itoa(r.Launch)
	}
	require.Equal(t, want[r.Program+"/"+r.Kernel], r.OutputDigest, "%s (%s): output differs from the heap run (G1)", id(), r.Kernel)
	// A kill at any instant leaves the previous or the new commit loadable
	// (G2): never a rejected file, never an I/O failure. v2 has no commit
	// point: a kill mid-commit leaves a file that is rejected (and replaced).
	loads := []spec.LoadOutcome{spec.LoadOK, spec.LoadMissing, spec.LoadLocked}
	if format == spec.FormatV2 {
		loads = append(loads, spec.LoadRejected)
	}
	require.Contains(t, loads, r.Load, "%s: load %s (%s)", id(), r.Load, r.LoadErr)
	if r.Load == spec.LoadRejected {
		n.rejected++
	}
	if r.CommitErr != "" {
		// docs/locking.md: a Finalize that cannot get the lock records the
		// busy lock; any other commit error is a failure.
		require.True(t, r.CommitBusy, "%s: commit failed: %s", id(), r.CommitErr)
		n.commitBusy++
	}
	require.Zero(t, r.Private, "%s: the backend packed privately", id())
	busy := r.HeapByReason[cache.HeapLockBusy] > 0
	repacked := uint64(0)
	for _, v := range r.Repacks {
		repacked += v
	}
	switch {
	case r.Misses == 0:
		n.warm++
		require.Zero(t, r.Commits, "%s: a launch that hit everything wrote (G4)", id())
	case r.Load == spec.LoadLocked:
		// docs/locking.md: a busy shared lock at load ⇒ every reservation of
		// this program goes to heap. Nothing was loaded, so nothing is
		// mapped and there is nothing to drop: nothing is written.
		n.locked++
		require.True(t, busy, "%s: load was locked but nothing went to heap as lock-busy: %+v", id(), r)
		require.Zero(t, r.FileBytes, "%s: load was locked, yet file data is in use", id())
		require.Zero(t, r.Commits, "%s: load was locked, yet the launch committed", id())
	case busy:
		// The exclusive lock was busy at the first reservation: its packs
		// are on heap. Finalize may still take the lock to drop entries it
		// found stale (the writer row of docs/locking.md's table).
		n.busy++
		if r.Commits > 0 {
			n.busyDropped++
		}
	case r.Commits > 0:
		n.wrote++
		if repacked == 0 {
			// Only v2 commits with nothing new: space it appended after the
			// newest commit (its insert found the entry there) must be
			// followed by an index, the only commit point v2 has.
			require.Equal(t, spec.FormatV2, format, "%s: committed without packing anything", id())
			n.terminated++
		}
	default:
		// Missed on a stale view, then found the entries in the newest
		// commit re-read under the exclusive lock (or could not commit):
		// nothing of its own in the file.
		n.deduped++
		require.True(t, repacked == 0 || r.CommitBusy, "%s: packed into the file without committing: %+v", id(), r)
	}
}

// checkFileAfter: the file left by the run parses, loads, checks clean,
// serves every program with the heap run's outputs, converges (a second
// launch hits everything, G3) and has no temporary files once a writer ran.
func checkFileAfter(t *testing.T, format spec.Format, path string, want map[string]uint64) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	fi, err := f.Stat()
	require.NoError(t, err)
	if format == spec.FormatV3 {
		got, err := spec.DetectFormat(f, fi.Size())
		require.NoError(t, err)
		require.Equal(t, spec.FormatV3, got)
		_, err = spec.ParseV3(f, fi.Size())
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())

	c, err := cache.Open(cache.Options{Path: path, Format: format})
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("check"))
	if format == spec.FormatV3 {
		require.Equal(t, spec.LoadOK, c.Stats().Load)
	} else {
		// The last kill may have torn the v2 footer; Compact replaces it.
		require.Contains(t, []spec.LoadOutcome{spec.LoadOK, spec.LoadRejected}, c.Stats().Load)
		t.Logf("v2 file after the run: load %s", c.Stats().Load)
	}
	require.NoError(t, c.Finalize())
	require.NoError(t, c.Check())
	require.NoError(t, c.Compact()) // takes the writer lock: removes crashed writers' temporaries
	require.NoError(t, c.Close())
	temps, err := filepath.Glob(path + ".tmp-*")
	require.NoError(t, err)
	require.Empty(t, temps)

	names := proctest.Programs
	if format == spec.FormatV2 {
		names = []string{"a", "b"}
	}
	for _, name := range names {
		p, err := proctest.Program(name)
		require.NoError(t, err)
		for i := range 2 {
			rep, err := runtime.Launch(context.Background(), runtime.LaunchConfig{CachePath: path, Program: p, Verify: true, Format: format})
			require.NoError(t, err)
			require.True(t, rep.Verified, "%s", name)
			require.Equal(t, want[name+"/"+rep.Kernel], rep.OutputDigest)
			if i == 1 {
				require.Zero(t, rep.Misses, "%s: second sequential launch missed (G3)", name)
				require.Zero(t, rep.Commits, "%s: second sequential launch wrote (G4)", name)
			}
		}
	}
}
