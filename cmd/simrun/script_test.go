package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/xpwc/xpwc/spec/spectest"
)

// TestMain lets the test binary act as the simrun command inside scripts:
// testscript re-executes it with the command name "simrun".
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"simrun": func() { os.Exit(run(&env{stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])) },
	})
}

// TestScripts runs testdata/script/*.txtar: the command line as engineers
// use it, exit codes included (docs/simrun.md).
//
//	go test ./cmd/simrun -run TestScripts
//	go test ./cmd/simrun -run TestScripts/launch-twice -testwork
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":   cmdStatus,
			"waitfile": cmdWaitFile,
			"scribble": cmdScribble,
			"hostile":  cmdHostile,
			"mkfifo":   cmdMkfifo,
			"sleep":    cmdSleep,
			"etfile":   cmdETFile,
		},
	})
}

// cmdStatus is "status CODE PROG ARGS...": run PROG and require exit CODE,
// since "! exec" accepts any failure and the exit codes are part of the
// interface (0 ok, 1 problem, 2 usage). stdout and stderr stay available
// to the following stdout/stderr checks.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: bad exit code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdWaitFile is "waitfile NAME": wait up to ten seconds for a background
// command to create NAME, so a script can act once, say, a lock is held.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile NAME")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfile: %s did not appear", args[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cmdScribble is "scribble FILE OFFSET TEXT": overwrite bytes of FILE in
// place, as bit rot or a stray writer would (no truncation, no rename).
func cmdScribble(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: scribble FILE OFFSET TEXT")
	}
	off, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY, 0)
	ts.Check(err)
	_, err = f.WriteAt([]byte(args[2]), off)
	ts.Check(err)
	ts.Check(f.Close())
}

// cmdHostile is "hostile N FILE": write forged file N of
// spectest.HostileFiles (64 GiB, sparse) to FILE.
func cmdHostile(ts *testscript.TestScript, neg bool, args []string) {
	files := spectest.HostileFiles()
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hostile N FILE")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 || n >= len(files) {
		ts.Fatalf("hostile: N must be 0 to %d", len(files)-1)
	}
	ts.Check(files[n].File.Materialize(ts.MkAbs(args[1])))
}

// cmdETFile is "etfile NAME FILE": write the ExecuTorch-written file NAME
// of spectest.ExecuTorchFiles (one.bin, three.bin, twosaves.bin,
// reloaded.bin) to FILE.
func cmdETFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: etfile NAME FILE")
	}
	for _, f := range spectest.ExecuTorchFiles() {
		if f.Name == args[0] {
			ts.Check(os.WriteFile(ts.MkAbs(args[1]), f.File, 0o600))
			return
		}
	}
	ts.Fatalf("etfile: no ExecuTorch file %q", args[0])
}

// cmdMkfifo is "mkfifo NAME": make a FIFO, which must never hang a command
// that is given it as a cache file.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo NAME")
	}
	ts.Check(mkfifo(ts.MkAbs(args[0])))
}

// cmdSleep is "sleep DURATION": give a background command time to start.
func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sleep DURATION")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	time.Sleep(d)
}
