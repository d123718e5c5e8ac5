package sim

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/leanovate/gopter"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// weights bias the generator toward whole launches (look up, reserve,
// insert, finalize) so that random runs commit, hit and converge, with
// environment events rare enough that launches finish in between.
var weights = map[spec.OpKind]int{
	spec.OpInit: 4, spec.OpLookUp: 8, spec.OpReserve: 8, spec.OpInsert: 8,
	spec.OpFinalize: 6, spec.OpSave: 1, spec.OpInvalidate: 1, spec.OpUnload: 2,
	spec.OpDestroy: 1, spec.OpCompute: 16, spec.EvCrash: 1, spec.EvRestart: 2, spec.EvKernelUpgrade: 1,
	spec.EvSourceChange: 1, spec.EvForeign: 1, spec.EvClobberOptions: 1,
}

// weight is k's weight in the generator under design d. Under on-compute
// foreign writes are drawn four times as often, so that corruption meets
// an inference after finalize (the re-pack at compute) in runs of 60 ops.
func weight(d *model.Design, k spec.OpKind) int {
	if k == spec.EvForeign && d.CheckAtCompute {
		return 4 * weights[k]
	}
	return weights[k]
}

// GenOptions select what Generate may produce.
type GenOptions struct {
	// Power allows power loss (only the crashfs backend performs it).
	Power bool
	// Allow, if set, drops the outcomes it refuses in model state s: ops
	// a world cannot perform there, or whose outcome it is not held to.
	Allow func(s *model.State, op spec.Op) bool
	_     struct{}
}

// Generate returns a seeded sequence of up to steps ops, each enabled in the
// state the previous ones reach under design d (so every op is valid, and a
// crash names its branch). It is the sequence gopter's commands draw for
// the lockstep property from seed (CheckSeed), without running it.
func Generate(seed uint64, steps int, d model.Design, b model.Bounds, opt GenOptions) []spec.Op {
	l := newLockstep(Config{}, d, b, opt)
	l.record = true
	l.check(seed, steps)
	if l.first == nil {
		return nil
	}
	return l.first.drawn
}

// Replayable reports whether the model enables every op of ops in turn
// under d: the shrinker's filter for candidate sequences.
func Replayable(d model.Design, b model.Bounds, ops []spec.Op) bool {
	_, err := model.Replay(&d, b, ops)
	return err == nil
}

// allowed reports whether the model enables every op of ops in turn under
// d, with one outcome, each one allow lets a run perform.
func allowed(d model.Design, b model.Bounds, ops []spec.Op, allow func(*model.State, spec.Op) bool) bool {
	s := model.Init(b)
	for _, op := range ops {
		outs := model.Step(&d, b, s, op)
		if len(outs) != 1 || !allow(&s, outs[0].Op) {
			return false
		}
		s = outs[0].Next
	}
	return true
}

// RunOps replays ops in lockstep under cfg and returns the first failure
// (a *DivergenceError, a *ViolationError or an error of the harness), nil
// when every step and the file at the end agreed. Each commit takes the cache's compaction
// decision, recorded in its op's Branch (ops is updated in place).
func RunOps(cfg Config, design string, b model.Bounds, ops []spec.Op) error {
	_, err := RunOpsTrace(cfg, design, b, ops)
	return err
}

// RunOpsTrace is RunOps returning what the run stepped, up to its failure.
func RunOpsTrace(cfg Config, design string, b model.Bounds, ops []spec.Op) (Trace, error) {
	r, err := NewRunner(cfg)
	if err != nil {
		return Trace{}, err
	}
	defer r.Close()
	err = r.runOps(design, b, ops)
	return r.Trace(), err
}

func (r *Runner) runOps(design string, b model.Bounds, ops []spec.Op) error {
	if err := r.prepare(design, b); err != nil {
		return err
	}
	for i, op := range ops {
		took, err := r.stepGenerated(op)
		// The branch the commit took (see matchCompaction), so that the
		// sequence, and any scenario written from it, replays.
		ops[i].Branch = took.Branch
		if err != nil {
			return err
		}
	}
	// The file at the end, as the scenario FormatScenario writes ends: a
	// commit lost at the last step (a power loss) shows nowhere else.
	_, err := r.Exec("file")
	return err
}

// prepare sets a runner up for a generated sequence under design and
// bounds b: commits adopt the cache's compaction decisions.
func (r *Runner) prepare(design string, b model.Bounds) error {
	if design != "" && design != r.design.Name {
		if _, err := r.Exec("design name=" + design); err != nil {
			return err
		}
	}
	r.bounds = b
	r.adopt = true
	return nil
}

// stepGenerated steps one op of a generated sequence and returns it as
// performed: a commit with the branch it took. After a commit took a
// compaction decision the generator's model did not, an op the model no
// longer enables is skipped.
func (r *Runner) stepGenerated(op spec.Op) (spec.Op, error) {
	_, err := r.Step(op)
	if commits(op.Kind) {
		op.Branch = r.last.Branch
	}
	var h *HarnessError
	if err != nil && r.diverted && errors.As(err, &h) && strings.HasPrefix(h.Msg, msgNotEnabled) {
		return op, nil
	}
	return op, err
}

// Shrink returns a shorter sequence on which fails still holds, by delta
// debugging over the op list: remove chunks of len/2, len/4, …, 1 ops at
// every offset, keeping a removal whenever the rest is replayable (valid)
// and still fails. The result is 1-minimal: removing any single op makes
// it valid-and-passing or invalid.
func Shrink(ops []spec.Op, valid, fails func([]spec.Op) bool) []spec.Op {
	cur := append([]spec.Op(nil), ops...)
	for chunk := len(cur) / 2; chunk >= 1; {
		removed := false
		for i := 0; i+chunk <= len(cur); {
			cand := append(append([]spec.Op(nil), cur[:i]...), cur[i+chunk:]...)
			if valid(cand) && fails(cand) {
				cur, removed = cand, true
				continue
			}
			i++
		}
		if !removed {
			chunk /= 2
		}
	}
	return cur
}

// FormatScenario writes ops as a scenario file under design d with bounds
// b, each with the model's expected output, after header comment lines.
func FormatScenario(header []string, design string, b model.Bounds, ops []spec.Op) (string, error) {
	return formatScenario(header, designDirectives(design), b, ops)
}

// designDirectives are the directives that set design d up in a scenario.
func designDirectives(d string) []string {
	if d != "" && d != "reference" {
		return []string{"design name=" + d}
	}
	return nil
}

// formatScenario is FormatScenario after the set-up directives pre.
func formatScenario(header, pre []string, b model.Bounds, ops []spec.Op) (string, error) {
	r, err := NewRunner(Config{Backend: BackendModel})
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, h := range header {
		sb.WriteString("# " + h + "\n")
	}
	sb.WriteString("\n")
	emit := func(line string) error {
		out, err := r.Exec(line)
		if err != nil {
			return err
		}
		fmt.Fprintf(&sb, "%s\n----\n%s\n\n", line, out)
		return nil
	}
	for _, line := range pre {
		if err := emit(line); err != nil {
			return "", err
		}
	}
	if err := emit(fmt.Sprintf("bounds procs=%d names=%d programs=%d kernels=%d sources=%d",
		b.Procs, b.Names, b.Programs, b.Kernels, b.Sources)); err != nil {
		return "", err
	}
	for _, op := range ops {
		if err := emit(op.String()); err != nil {
			return "", err
		}
	}
	if err := emit("file"); err != nil {
		return "", err
	}
	return sb.String(), nil
}

// Checked is the verdict on one seed of a random campaign: the generated
// sequence's run and, when it failed other than at a known divergence, the
// failure shrunk by gopter's commands, then by delta debugging, and written
// as a scenario file that `simrun replay` reads.
type Checked struct {
	Ops   int    // ops generated
	Err   error  // the generated run's first failure; nil when every step agreed
	Known string // the known divergence it stopped at, "" for none
	// For a failure: the ops gopter's shrinking left (as performed, up to
	// the failing one), the shrunk sequence (delta debugging's, or
	// gopter's or the generated one when the failure does not reproduce on
	// a shorter one), its run's failure, and the scenario file's text,
	// whose header says it was found by found.
	Gopter   []spec.Op
	Shrunk   []spec.Op
	Final    error
	Scenario string
}

// Failed reports whether the seed failed other than at a known divergence.
func (c Checked) Failed() bool { return c.Err != nil && c.Known == "" }

// CheckSeed checks the lockstep property on seed's sequence: gopter's
// commands draw up to steps ops under d (power loss on crashfs only; for
// cfg.Format v2, d is V2Design and only the ops V2Allow lets a v2 run
// perform) and run them in lockstep under cfg (each run on the OS
// filesystem in a fresh temporary directory unless cfg.Dir is set), the
// file held to the model after every step. A failure is shrunk by gopter,
// then by delta debugging, and formatted. found is the command that
// reproduces it, for the scenario's header. Property tests and `simrun
// random` both run seeds through it, so a failure of either replays with
// `simrun replay`.
func CheckSeed(cfg Config, d model.Design, b model.Bounds, seed uint64, steps int, found string) Checked {
	cfg.FileEachStep = true
	run := func(ops []spec.Op) error {
		c := cfg
		if c.Backend == BackendOS && c.Dir == "" {
			dir, err := os.MkdirTemp("", "xpwc-random-")
			if err != nil {
				return err
			}
			defer func() { _ = os.RemoveAll(dir) }()
			c.Dir = dir
		}
		return RunOps(c, d.Name, b, append([]spec.Op(nil), ops...))
	}
	gen := GenOptions{Power: cfg.Backend == BackendCrashFS}
	valid := func(o []spec.Op) bool { return Replayable(d, b, o) }
	pre := designDirectives(d.Name)
	if cfg.Format == spec.FormatV2 {
		gen.Allow = V2Allow(cfg.Backend)
		valid = func(o []spec.Op) bool { return allowed(d, b, o, gen.Allow) }
		pre = []string{directiveV2}
	}
	l := newLockstep(cfg, d, b, gen)
	res := l.check(seed, steps)
	if l.first == nil {
		return Checked{Err: fmt.Errorf("%w: gopter ran no sequence (%v)", ErrHarness, res.Status)}
	}
	c := Checked{Ops: len(l.first.drawn), Known: l.first.known}
	// gopter's verdict decides; the run keeps the failure it saw.
	switch {
	case res.Status == gopter.TestFailed && l.last != nil:
		c.Err = l.first.err
	case res.Status == gopter.TestFailed:
		// A failure no run kept (a shrunk sequence gopter ran with a
		// command the model does not enable): the harness's.
		c.Err = fmt.Errorf("%w: gopter: %v", ErrHarness, res.Labels)
	case res.Status == gopter.TestError:
		c.Err = fmt.Errorf("%w: %v", ErrHarness, res.Error)
	case c.Known != "":
		c.Err = l.first.err
	}
	if !c.Failed() {
		return c
	}
	generated := l.first.performed
	c.Gopter = generated
	if l.last != nil {
		c.Gopter = l.last.performed
	}
	sig := Signature(c.Err)
	c.Shrunk = Shrink(c.Gopter, valid, func(o []spec.Op) bool { return Signature(run(o)) == sig })
	for _, ops := range [][]spec.Op{c.Shrunk, c.Gopter, generated} {
		// Not reproducible on a shorter sequence (dropping ops moves
		// injected faults to other calls): keep a longer one.
		if c.Shrunk, c.Final = ops, run(ops); c.Final != nil {
			break
		}
	}
	if c.Final == nil {
		c.Final = c.Err
	}
	header := []string{
		fmt.Sprintf("Found by %s,", found),
		fmt.Sprintf("shrunk from %d to %d ops by gopter's commands and to %d by delta debugging. Failure:", c.Ops, len(c.Gopter), len(c.Shrunk)),
	}
	for _, l := range strings.Split(c.Final.Error(), "\n") {
		header = append(header, "  "+l)
	}
	text, err := formatScenario(header, pre, b, c.Shrunk)
	if err != nil {
		// The model cannot describe it (a harness error): keep the trace.
		text = "# " + strings.Join(header, "\n# ") + "\n# (not replayable: " + err.Error() + ")\n" + spec.FormatTrace(c.Shrunk)
	}
	c.Scenario = text
	return c
}
