package proctest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/runtime"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

// ChildEnv selects the child role: its value is the job, in the form
// Job.Env produces.
const ChildEnv = "XPWC_PROCTEST_CHILD"

// Job is what one child process does: Launches launches on Path, each of a
// program drawn from Programs by a generator seeded with Seed, each as a
// fresh process would (its own Manager: the file is loaded from scratch).
type Job struct {
	ID       int
	Path     string
	Launches int
	Seed     uint64
	LockWait time.Duration
	Format   spec.Format // spec.FormatUnknown: the default (v3)
	// Programs are the letters of the programs to draw from; "" means all.
	Programs string
	// Kernels are the kernel names to draw from, joined by "+"; "" means
	// the default kernel. Two kernels of different layouts make launches
	// invalidate each other's entries, as a kernel upgrade rolling out
	// while old processes still run does (G1, G3).
	Kernels string
}

// Env renders the job as the value of ChildEnv.
func (j Job) Env() string {
	return fmt.Sprintf("%d,%d,%d,%d,%d,%s,%s,%s", j.ID, j.Launches, j.Seed, j.LockWait, j.Format, j.Programs, j.Kernels, j.Path)
}

// ParseJob reads a job rendered by Env.
func ParseJob(s string) (Job, error) {
	f := strings.SplitN(s, ",", 8)
	if len(f) != 8 {
		return Job{}, fmt.Errorf("proctest: job %q: want 8 fields", s)
	}
	var j Job
	id, err1 := strconv.Atoi(f[0])
	launches, err2 := strconv.Atoi(f[1])
	seed, err3 := strconv.ParseUint(f[2], 10, 64)
	wait, err4 := strconv.ParseInt(f[3], 10, 64)
	format, err5 := strconv.Atoi(f[4])
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return Job{}, fmt.Errorf("proctest: job %q: %w", s, err)
	}
	j.ID, j.Launches, j.Seed, j.LockWait = id, launches, seed, time.Duration(wait)
	j.Programs, j.Kernels, j.Path = f[5], f[6], f[7]
	j.Format = spec.Format(format)
	return j, nil
}

// Report is one launch of a child, as the child saw it.
type Report struct {
	Child, Launch int
	Program       string
	Kernel        string
	Load          spec.LoadOutcome
	LoadErr       string `json:",omitempty"`
	Hits, Misses  uint64
	Repacks       map[cache.RepackReason]uint64 `json:",omitempty"`
	Packed        int
	Private       int
	HeapByReason  map[cache.HeapReason]uint64 `json:",omitempty"`
	FileBytes     uint64
	Commits       uint64
	CommitErr     string `json:",omitempty"`
	// CommitBusy: CommitErr is a busy lock (docs/locking.md: Finalize
	// records it instead of failing).
	CommitBusy   bool `json:",omitempty"`
	OutputDigest uint64
}

// RunChild performs j and writes one Report per launch to w as a JSON line,
// each written as soon as its launch is done, so that a child killed later
// still leaves the reports of its finished launches.
func RunChild(ctx context.Context, j Job, w io.Writer) error {
	rng := rand.New(rand.NewPCG(j.Seed, uint64(j.ID)))
	enc := json.NewEncoder(w)
	progs := Programs
	if j.Programs != "" {
		progs = strings.Split(j.Programs, "")
	}
	reg := kernels.NewRegistry()
	ks := []*kernels.Kernel{reg.Default()}
	if j.Kernels != "" {
		ks = ks[:0]
		for _, n := range strings.Split(j.Kernels, "+") {
			k, ok := reg.Lookup(n)
			if !ok {
				return fmt.Errorf("%w: %q", ErrUnknownKernel, n)
			}
			ks = append(ks, k)
		}
	}
	for i := range j.Launches {
		name := progs[rng.IntN(len(progs))]
		k := ks[rng.IntN(len(ks))]
		p, err := Program(name)
		if err != nil {
			return err
		}
		rep, err := runtime.Launch(ctx, runtime.LaunchConfig{CachePath: j.Path, Program: p, Kernel: k, LockWait: j.LockWait, Format: j.Format})
		if err != nil {
			return fmt.Errorf("proctest: child %d launch %d (%s): %w", j.ID, i, name, err)
		}
		r := Report{
			Child: j.ID, Launch: i, Program: name, Kernel: rep.Kernel, Load: rep.Load,
			Hits: rep.Hits, Misses: rep.Misses, Repacks: rep.Repacks, Packed: rep.Packed, Private: rep.Private,
			HeapByReason: rep.HeapByReason, FileBytes: rep.FileBytes, Commits: rep.Commits,
			OutputDigest: rep.OutputDigest,
		}
		if rep.LoadErr != nil {
			r.LoadErr = rep.LoadErr.Error()
		}
		if rep.CommitErr != nil {
			r.CommitErr = rep.CommitErr.Error()
			r.CommitBusy = errors.Is(rep.CommitErr, cache.ErrLockBusy)
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// ChildMain runs the child role when ChildEnv is set and exits; otherwise
// it returns. Call it first in TestMain.
func ChildMain() {
	s := os.Getenv(ChildEnv)
	if s == "" {
		return
	}
	j, err := ParseJob(s)
	if err == nil {
		err = RunChild(context.Background(), j, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
