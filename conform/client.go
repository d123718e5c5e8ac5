package conform

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

var errImplementation = sim.ErrImplementation

// DefaultTimeout bounds every request: an adapter silent for longer is
// killed and the run's verdict is FaultTimeout.
const DefaultTimeout = 10 * time.Second

// maxLine bounds one response line (the bytes of an entry, base64).
const maxLine = 64 << 20

// Command is how to start an adapter: the program and its arguments.
type Command struct {
	Argv    []string
	Timeout time.Duration // per request; 0 means DefaultTimeout
	_       struct{}
}

// ParseCommand splits 'CMD ARGS' on white space (no shell quoting: an
// argument with spaces needs a wrapper script).
func ParseCommand(s string) (Command, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return Command{}, errors.New("conform: empty adapter command")
	}
	return Command{Argv: f}, nil
}

// String is the command as typed.
func (c Command) String() string { return strings.Join(c.Argv, " ") }

// Hello is what an adapter said about itself.
type Hello struct {
	Name         string   `json:"name"`
	Protocol     int      `json:"protocol"`
	Capabilities []string `json:"capabilities"`
	Format       string   `json:"format"`
}

// Claims reports whether the adapter claims capability c.
func (h Hello) Claims(c string) bool { return slices.Contains(h.Capabilities, c) }

// Client drives one adapter process: one cache instance of one abstract
// process. It implements sim.Instance. A protocol failure is sticky: the
// process is killed, Fault returns the failure and every later request
// fails with it.
type Client struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan lineResult
	stderr  *tailBuffer
	timeout time.Duration
	next    uint64
	hello   Hello
	path    string
	fault   error
	stats   cache.Stats
	// kept: the last init ran no loader (load word kept, version 2).
	kept bool
	// unsupported: the adapter answered unsupported (version 2); the run
	// ends there (Fault returns it).
	unsupported error
	done        chan struct{} // closed when the process was waited for
	waitOnce    sync.Once
}

type lineResult struct {
	line []byte
	err  error
}

var _ sim.Instance = (*Client)(nil)

// Start starts the adapter and exchanges hellos. The returned error is a
// *ProtocolError.
func Start(c Command) (*Client, error) {
	cl := &Client{timeout: c.Timeout, lines: make(chan lineResult, 1), stderr: &tailBuffer{max: 4096}, done: make(chan struct{})}
	if cl.timeout <= 0 {
		cl.timeout = DefaultTimeout
	}
	if len(c.Argv) == 0 {
		return nil, &ProtocolError{Kind: FaultStart, Op: OpHello, Msg: "no command"}
	}
	cl.cmd = exec.Command(c.Argv[0], c.Argv[1:]...)
	cl.cmd.Stderr = cl.stderr
	var err error
	if cl.stdin, err = cl.cmd.StdinPipe(); err != nil {
		return nil, &ProtocolError{Kind: FaultStart, Op: OpHello, Msg: err.Error()}
	}
	stdout, err := cl.cmd.StdoutPipe()
	if err != nil {
		return nil, &ProtocolError{Kind: FaultStart, Op: OpHello, Msg: err.Error()}
	}
	if err := cl.cmd.Start(); err != nil {
		return nil, &ProtocolError{Kind: FaultStart, Op: OpHello, Msg: err.Error()}
	}
	go cl.read(stdout)
	r, err := cl.call(&Request{Op: OpHello, Protocol: Protocol})
	if err == nil && (r.Protocol < MinProtocol || r.Protocol > Protocol) {
		err = cl.fail(&ProtocolError{Kind: FaultVersion, Op: OpHello,
			Msg: fmt.Sprintf("adapter speaks protocol %d, this driver %d to %d", r.Protocol, MinProtocol, Protocol)})
	}
	if err == nil {
		for _, cp := range r.Capabilities {
			if !slices.Contains(Capabilities(), cp) {
				err = cl.fail(&ProtocolError{Kind: FaultCapability, Op: OpHello, Msg: fmt.Sprintf("unknown capability %q", cp)})
				break
			}
		}
	}
	if err != nil {
		cl.kill()
		return nil, err
	}
	cl.hello = Hello{Name: r.Name, Protocol: r.Protocol, Capabilities: r.Capabilities, Format: r.Format}
	return cl, nil
}

// Hello is what the adapter said about itself.
func (cl *Client) Hello() Hello { return cl.hello }

// read feeds the adapter's stdout to call, one line at a time, until EOF.
func (cl *Client) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		select {
		case cl.lines <- lineResult{line: bytes.Clone(sc.Bytes())}:
		case <-cl.done:
			return
		}
	}
	err := sc.Err()
	if err == nil {
		err = io.EOF
	}
	select {
	case cl.lines <- lineResult{err: err}:
	case <-cl.done:
	}
}

// call sends one request and waits for its answer, at most the timeout.
// A failed response is not an error of call; a broken protocol is.
func (cl *Client) call(req *Request) (*Response, error) {
	if cl.fault != nil {
		return nil, cl.fault
	}
	cl.next++
	req.ID = cl.next
	line, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(cl.timeout)
	defer timer.Stop()
	// Writing may block on an adapter that stops reading: it goes in its
	// own goroutine, under the same deadline.
	wrote := make(chan error, 1)
	go func() { _, err := cl.stdin.Write(append(line, '\n')); wrote <- err }()
	select {
	case err := <-wrote:
		if err != nil {
			return nil, cl.fail(&ProtocolError{Kind: FaultExit, Op: req.Op, Msg: "writing the request: " + err.Error() + cl.exitNote()})
		}
	case <-timer.C:
		return nil, cl.fail(&ProtocolError{Kind: FaultTimeout, Op: req.Op, Msg: fmt.Sprintf("did not read the request within %v", cl.timeout)})
	}
	select {
	case lr := <-cl.lines:
		if lr.err != nil {
			msg := "closed its stdout"
			if !errors.Is(lr.err, io.EOF) {
				msg = lr.err.Error()
			}
			return nil, cl.fail(&ProtocolError{Kind: FaultExit, Op: req.Op, Msg: msg + cl.exitNote()})
		}
		var r Response
		dec := json.NewDecoder(bytes.NewReader(lr.line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, cl.fail(&ProtocolError{Kind: FaultGarbage, Op: req.Op, Msg: fmt.Sprintf("%q: %v", clip(lr.line), err)})
		}
		if r.ID != req.ID {
			return nil, cl.fail(&ProtocolError{Kind: FaultOrder, Op: req.Op, Msg: fmt.Sprintf("answer to request %d, waiting for %d", r.ID, req.ID)})
		}
		return &r, nil
	case <-timer.C:
		return nil, cl.fail(&ProtocolError{Kind: FaultTimeout, Op: req.Op, Msg: fmt.Sprintf("no answer within %v", cl.timeout)})
	}
}

// fail records a protocol failure and kills the adapter.
func (cl *Client) fail(err error) error {
	if cl.fault == nil {
		cl.fault = err
	}
	cl.kill()
	return cl.fault
}

// kill sends SIGKILL and reaps the process (idempotent; os/exec does not
// signal a process it has reaped).
func (cl *Client) kill() {
	_ = cl.cmd.Process.Kill()
	cl.wait()
}

// wait closes the adapter's stdin and reaps it; concurrent callers all
// return once it is reaped.
func (cl *Client) wait() {
	cl.waitOnce.Do(func() {
		_ = cl.stdin.Close()
		_ = cl.cmd.Wait()
		close(cl.done)
	})
}

// exitNote waits briefly for an exiting adapter and says how it ended,
// with the end of its stderr.
func (cl *Client) exitNote() string {
	exited := make(chan struct{})
	go func() { cl.wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(time.Second):
		_ = cl.cmd.Process.Kill()
		<-exited
	}
	s := ""
	if ps := cl.cmd.ProcessState; ps != nil {
		s = " (" + ps.String() + ")"
	}
	if t := strings.TrimSpace(cl.stderr.String()); t != "" {
		s += "; stderr: " + t
	}
	return s
}

func clip(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}

// do is call for requests whose failure is a result: it returns the
// response, and the failure as an error (nil response on a protocol
// failure).
func (cl *Client) do(req *Request) (*Response, error) {
	r, err := cl.call(req)
	if err != nil {
		return nil, err
	}
	if r.Unsupported && !r.OK && cl.hello.Protocol >= 2 && cl.unsupported == nil {
		cl.unsupported = &sim.UnsupportedError{Op: req.Op, Msg: r.Error}
	}
	return r, errorOf(r)
}

// SetPath opens the adapter's instance on path.
func (cl *Client) SetPath(path string) error {
	cl.path = path
	_, err := cl.do(&Request{Op: OpSetPath, Path: path})
	return err
}

// Path is the path set.
func (cl *Client) Path() string { return cl.path }

// InitializeForProgram implements sim.Instance.
func (cl *Client) InitializeForProgram(program string) error {
	r, err := cl.do(&Request{Op: OpInit, Program: program})
	if r != nil && r.Load == LoadKept && cl.hello.Protocol >= 2 {
		cl.kept = true
		return err
	}
	cl.kept = false
	if r != nil {
		load, perr := spec.ParseLoadOutcome(r.Load)
		if perr != nil {
			return cl.fail(&ProtocolError{Kind: FaultGarbage, Op: OpInit, Msg: perr.Error()})
		}
		cl.stats.Load = load
		cl.stats.LoadErr = nil
		if r.LoadError != "" || r.LoadCode != "" {
			cl.stats.LoadErr = codeError(r.LoadCode, r.LoadError)
		}
	}
	return err
}

// LookUp implements sim.Instance.
func (cl *Client) LookUp(k spec.Key) (sim.Handle, bool) {
	r, err := cl.do(&Request{Op: OpLookUp, Key: keyOf(k)})
	if r == nil || err != nil {
		return 0, false
	}
	if r.Checked {
		cl.stats.Verified++
	}
	if !r.Hit {
		return 0, false
	}
	return sim.Handle(r.Handle), true
}

// Bytes implements sim.Instance.
func (cl *Client) Bytes(h sim.Handle) ([]byte, error) {
	return cl.readBytes(OpReadBytes, h)
}

// Compute implements sim.Computer: an inference's read after finalize
// (protocol 2; a version 1 adapter is asked read_bytes). A read whose
// check failed is cache.ErrCorruptData.
func (cl *Client) Compute(h sim.Handle) ([]byte, error) {
	if cl.hello.Protocol < 2 {
		return cl.Bytes(h)
	}
	return cl.readBytes(OpCompute, h)
}

// readBytes asks for the bytes behind h with op (read_bytes or compute): a read
// the cache checked counts as a verification (verify-on-compute), and one
// whose check failed is cache.ErrCorruptData.
func (cl *Client) readBytes(op string, h sim.Handle) ([]byte, error) {
	r, err := cl.do(&Request{Op: op, Handle: uint64(h)})
	if err != nil {
		return nil, err
	}
	if r.Checked {
		cl.stats.Verified++
	}
	if r.Corrupt {
		return nil, cache.ErrCorruptData
	}
	return r.Data, nil
}

// ReserveSpace implements sim.Instance: the packer writes a buffer here;
// Insert sends its bytes.
func (cl *Client) ReserveSpace(n int) (sim.Reservation, error) {
	r, err := cl.do(&Request{Op: OpReserve, Size: n})
	if r != nil {
		cl.stats.FallbackErr = nil
		if r.Fallback != "" {
			cl.stats.FallbackErr = codeError(r.Fallback, "")
		}
	}
	if err != nil {
		return sim.Reservation{}, err
	}
	return sim.Reservation{ID: r.Reservation, Buf: make([]byte, n), InFile: r.InFile}, nil
}

// Insert implements sim.Instance.
func (cl *Client) Insert(k spec.Key, res sim.Reservation) error {
	_, err := cl.do(&Request{Op: OpInsert, Key: keyOf(k), Reservation: res.ID, Data: res.Buf})
	return err
}

// IsFinalized implements sim.Instance.
func (cl *Client) IsFinalized() (bool, error) {
	r, err := cl.do(&Request{Op: OpIsFinalized})
	if err != nil {
		return false, err
	}
	return r.Finalized, nil
}

// Finalize implements sim.Instance.
func (cl *Client) Finalize() error { return cl.commit(OpFinalize, "") }

// Save implements sim.Instance.
func (cl *Client) Save() error { return cl.commit(OpSave, "") }

// Invalidate implements sim.Instance.
func (cl *Client) Invalidate(w string) error { return cl.commit(OpInvalidate, w) }

func (cl *Client) commit(op, weight string) error {
	r, err := cl.do(&Request{Op: op, Weight: weight})
	if r != nil {
		cl.stats.Compactions = r.Compactions
		cl.stats.CommitErr = nil
		if r.CommitError != "" {
			cl.stats.CommitErr = errors.New(r.CommitError)
		}
	}
	return err
}

// Mappings implements sim.MapCounter through stats, for an adapter that
// claims the capability (protocol 2); for any other it is not supported
// and I7 is not judged.
func (cl *Client) Mappings() ([]cache.MappedCopy, error) {
	if cl.hello.Protocol < 2 || !cl.hello.Claims(CapStats) {
		return nil, &sim.UnsupportedError{Op: OpStats, Msg: "not claimed"}
	}
	r, err := cl.do(&Request{Op: OpStats})
	if r == nil {
		return nil, err // the protocol broke: Fault says so
	}
	if cl.unsupported != nil {
		return nil, nil // claimed and not had: Fault ends the run there
	}
	if err != nil {
		return nil, &ProtocolError{Kind: FaultCapability, Op: OpStats, Msg: "claims stats and failed: " + err.Error()}
	}
	out := make([]cache.MappedCopy, 0, len(r.Mapped))
	for _, m := range r.Mapped {
		out = append(out, cache.MappedCopy{Name: m.Name, Maps: m.Maps})
	}
	return out, nil
}

// DeleteProgram implements sim.Instance.
func (cl *Client) DeleteProgram(p string) error {
	_, err := cl.do(&Request{Op: OpDeleteProgram, Program: p})
	return err
}

// Close destroys the instance and waits for the adapter to exit.
func (cl *Client) Close() error {
	_, err := cl.do(&Request{Op: OpDestroy})
	if cl.fault == nil {
		// The adapter exits after answering destroy; one that lingers is
		// killed after the timeout rather than waited for forever.
		exited := make(chan struct{})
		go func() { cl.wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(cl.timeout):
			cl.kill()
			<-exited
		}
	}
	cl.kill()
	return err
}

// Kill implements sim.Instance: SIGKILL, as a crash of the process.
func (cl *Client) Kill() { cl.kill() }

// Stats implements sim.Instance with what the responses reported.
func (cl *Client) Stats() cache.Stats { return cl.stats }

// Names implements sim.Instance; the protocol does not list entries.
func (cl *Client) Names() []string { return nil }

// Fault implements sim.Instance: a broken protocol, or an operation the
// adapter does not have (*sim.UnsupportedError).
func (cl *Client) Fault() error {
	if cl.fault != nil {
		return cl.fault
	}
	return cl.unsupported
}

// KeptView reports whether the last init ran no loader (sim.ViewKeeper).
func (cl *Client) KeptView() bool { return cl.kept }

// Opener returns the sim.Opener that starts one adapter process per
// instance (each abstract process of a scenario is its own adapter
// process, so two of them on one path are two processes, as in the field).
// hello, when not nil, receives the first adapter's hello.
func Opener(c Command, hello func(Hello)) sim.Opener {
	var once sync.Once
	return func(path string, _ vfs.FS) (sim.Instance, error) {
		cl, err := Start(c)
		if err != nil {
			return nil, err
		}
		if hello != nil {
			once.Do(func() { hello(cl.hello) })
		}
		if err := cl.SetPath(path); err != nil {
			cl.kill()
			if cl.fault != nil {
				return nil, cl.fault
			}
			return nil, &ProtocolError{Kind: FaultStart, Op: OpSetPath, Msg: err.Error()}
		}
		return cl, nil
	}
}

// tailBuffer keeps the last max bytes written (an adapter's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
