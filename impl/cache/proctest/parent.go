//go:build unix

package proctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// Exit is how a child ended.
type Exit string

const (
	// ExitOK: the child finished its job.
	ExitOK Exit = "ok"
	// ExitKilled: the child died of the SIGKILL the parent sent.
	ExitKilled Exit = "killed"
	// ExitFailed: anything else: a non-zero status (a failed check, a Go
	// fatal error such as an unrecovered SIGBUS, which the runtime turns
	// into exit status 2), or death by a signal the parent did not send.
	ExitFailed Exit = "failed"
)

// ErrChildFailed is matched by Outcome.Err for ExitFailed.
var ErrChildFailed = errors.New("proctest: child failed")

// Child is a running child process.
type Child struct {
	Job Job
	cmd *exec.Cmd

	stderr bytes.Buffer
	// stdout is filled by a reader goroutine; reported[k-1] is closed when
	// the k-th report line is complete, done when stdout reached EOF.
	stdout   bytes.Buffer
	reported []chan struct{}
	done     chan struct{}

	mu     sync.Mutex
	killed bool
}

// Start runs exe (the test binary) in the child role for j.
func Start(exe string, j Job) (*Child, error) {
	c := &Child{Job: j, done: make(chan struct{})}
	c.reported = make([]chan struct{}, max(j.Launches, 1))
	for i := range c.reported {
		c.reported[i] = make(chan struct{})
	}
	c.cmd = exec.Command(exe)
	c.cmd.Env = append(os.Environ(), ChildEnv+"="+j.Env())
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("proctest: start child %d: %w", j.ID, err)
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("proctest: start child %d: %w", j.ID, err)
	}
	go c.read(out)
	return c, nil
}

func (c *Child) read(out io.Reader) {
	defer close(c.done)
	buf := make([]byte, 4096)
	lines := 0
	for {
		n, err := out.Read(buf)
		c.mu.Lock()
		c.stdout.Write(buf[:n])
		c.mu.Unlock()
		for _, b := range buf[:n] {
			if b == '\n' && lines < len(c.reported) {
				close(c.reported[lines])
				lines++
			}
		}
		if err != nil {
			return
		}
	}
}

// Reported is closed once the child has reported k launches (1 ≤ k ≤
// Job.Launches); killing it then lands in launch k+1 (during its load, a
// pack, its commit or inference) or just after it.
func (c *Child) Reported(k int) <-chan struct{} {
	return c.reported[min(max(k, 1), len(c.reported))-1]
}

// Exited is closed when the child's output ended (it exited or was killed).
func (c *Child) Exited() <-chan struct{} { return c.done }

// Kill sends SIGKILL. A child that already exited is not marked killed.
func (c *Child) Kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd.Process.Signal(syscall.SIGKILL) == nil {
		c.killed = true
	}
}

// Outcome is what a child left behind.
type Outcome struct {
	Job     Job
	Exit    Exit
	Reports []Report
	Stderr  string
	Err     error
}

// Wait waits for the child and classifies its end.
func (c *Child) Wait() Outcome {
	<-c.done // Wait must follow the last read of the pipe
	werr := c.cmd.Wait()
	c.mu.Lock()
	killed := c.killed
	c.mu.Unlock()
	o := Outcome{Job: c.Job, Stderr: c.stderr.String()}
	reps, perr := parseReports(c.stdout.Bytes(), killed)
	o.Reports = reps
	ws, _ := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case werr == nil && perr == nil:
		o.Exit = ExitOK
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL && killed && perr == nil:
		o.Exit = ExitKilled
	default:
		o.Exit = ExitFailed
		o.Err = fmt.Errorf("%w: child %d: %v%s (wait status %v, parse %v); stderr:\n%s",
			ErrChildFailed, c.Job.ID, werr, fault(o.Stderr), ws, perr, excerpt(o.Stderr, 1500))
	}
	return o
}

// parseReports reads the JSON lines. Each line is written by one write of
// less than a pipe buffer, so only a killed child may leave a partial last
// line, which is then dropped.
func parseReports(out []byte, killed bool) ([]Report, error) {
	var reps []Report
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var r Report
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			if killed && !bytes.HasSuffix(out, []byte("\n")) {
				break
			}
			return reps, fmt.Errorf("proctest: report line %q: %w", sc.Text(), err)
		}
		reps = append(reps, r)
	}
	return reps, sc.Err()
}

// fault names the memory fault a Go fatal error reports ("[signal SIGBUS:
// bus error ...]"), which otherwise hides in exit status 2.
func fault(stderr string) string {
	for _, sig := range []string{"SIGBUS", "SIGSEGV"} {
		if strings.Contains(stderr, "signal "+sig) {
			return ", took " + sig
		}
	}
	return ""
}

// excerpt keeps the head of s (where a Go fatal error names its cause) and
// its tail (a failed check's message).
func excerpt(s string, n int) string {
	if len(s) <= 2*n {
		return s
	}
	return s[:n] + "\n…\n" + s[len(s)-n:]
}
