package sim

import (
	"errors"
	"os"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"
	"github.com/leanovate/gopter/gen"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// lockstep is the model-against-implementation property as gopter's
// commands: the abstract state is the model's State, a command is one of
// the simulator's operations (a spec.Op the model enables there, crashes
// with their branch), and the system under test is a Runner stepping the
// model and the cache together. gopter draws each command from the ops
// the model enables, weighted as the generator's weights say (candidates),
// and shrinks a failing sequence by dropping commands whose removal keeps
// every later one enabled. Generate, CheckSeed (`simrun random`,
// model/conformance) and the property tests all draw through it.
//
// The property is checked one sequence at a time (check); what its runs
// found is kept here, for the caller to read afterwards.
type lockstep struct {
	cfg      Config
	d        model.Design
	b        model.Bounds
	opt      GenOptions
	alphabet []spec.Op
	// record: the system under test only records the ops it is given
	// (Generate), no Runner is started.
	record bool

	// first is the run of the generated sequence; last the last run that
	// failed with its failure's signature: gopter's shrunk sequence, since
	// gopter keeps the last failing candidate.
	first, last *lockstepRun
	sig         string
}

func newLockstep(cfg Config, d model.Design, b model.Bounds, opt GenOptions) *lockstep {
	return &lockstep{cfg: cfg, d: d, b: b, opt: opt, alphabet: model.Alphabet(b)}
}

// check runs the property on the one sequence of steps ops that seed
// draws, shrinking it with gopter's shrinker when it fails.
func (l *lockstep) check(seed uint64, steps int) *gopter.TestResult {
	p := gopter.DefaultTestParametersWithSeed(int64(seed))
	p.MinSuccessfulTests, p.Workers = 1, 1
	p.MinSize, p.MaxSize = steps, steps
	return commands.Prop(l).Check(p)
}

// candidates appends every outcome the generator may draw in s, and
// returns them with their total weight: each op of the alphabet the model
// enables there (each branch of a crash), that opt allows.
func candidates(dst []model.Outcome, d *model.Design, b model.Bounds, alphabet []spec.Op, opt GenOptions, s *model.State) ([]model.Outcome, int) {
	total := 0
	for _, op := range alphabet {
		if op.Kind == spec.EvCrash && op.Crash == spec.CrashPower && !opt.Power {
			continue
		}
		if op.Kind == spec.OpCompute && !d.CheckAtCompute {
			// Where the look-up checks, a compute reads what it
			// checked and changes nothing; drawing it would only
			// reshuffle every other design's sequences.
			continue
		}
		for _, o := range model.Step(d, b, *s, op) {
			if opt.Allow != nil && !opt.Allow(s, o.Op) {
				continue
			}
			dst = append(dst, o)
			total += weight(d, op.Kind)
		}
	}
	return dst, total
}

// pick is the op of the candidate that x, less than their total weight,
// falls on.
func pick(d *model.Design, cands []model.Outcome, x int) spec.Op {
	for _, o := range cands {
		if x -= weight(d, o.Op.Kind); x < 0 {
			return o.Op
		}
	}
	return cands[len(cands)-1].Op
}

// GenCommand draws one enabled op in the model state s, weighted.
func (l *lockstep) GenCommand(s commands.State) gopter.Gen {
	st := s.(model.State)
	return func(p *gopter.GenParameters) *gopter.GenResult {
		if p == gopter.MinGenParams {
			// gopter's SuchThat asks for the result type only, with
			// parameters of its own: no draw.
			return gopter.NewGenResult(opCommand{}, gopter.NoShrinker)
		}
		cands, total := candidates(nil, &l.d, l.b, l.alphabet, l.opt, &st)
		if total == 0 {
			// Nothing is enabled (only with opt.Allow): the sequence ends.
			return gopter.NewGenResult(endCommand{}, gopter.NoShrinker)
		}
		return gopter.NewGenResult(opCommand{l: l, op: pick(&l.d, cands, p.Rng.Intn(total))}, gopter.NoShrinker)
	}
}

// GenInitialState is the model's start state under the bounds.
func (l *lockstep) GenInitialState() gopter.Gen { return gen.Const(model.Init(l.b)) }

// InitialPreCondition holds: every sequence starts from Init.
func (l *lockstep) InitialPreCondition(commands.State) bool { return true }

// NewSystemUnderTest starts one sequence's run: a Runner on a fresh
// directory (on the OS filesystem) under the design and bounds.
func (l *lockstep) NewSystemUnderTest(commands.State) commands.SystemUnderTest {
	run := &lockstepRun{}
	if l.record {
		return run
	}
	cfg := l.cfg
	if cfg.Backend == BackendOS && cfg.Dir == "" {
		if cfg.Dir, run.err = os.MkdirTemp("", "xpwc-random-"); run.err != nil {
			return run
		}
		run.dir = cfg.Dir
	}
	if run.r, run.err = NewRunner(cfg); run.err == nil {
		run.err = run.r.prepare(l.d.Name, l.b)
	}
	return run
}

// DestroySystemUnderTest closes the run and keeps what it found.
func (l *lockstep) DestroySystemUnderTest(sut commands.SystemUnderTest) {
	run := sut.(*lockstepRun)
	if run.r != nil {
		run.performed = run.r.Trace().Ops
		run.r.Close()
	}
	if run.dir != "" {
		_ = os.RemoveAll(run.dir)
	}
	if l.first == nil {
		l.first = run
	}
	if run.failed {
		l.last = run
	}
}

// lockstepRun is one sequence's system under test.
type lockstepRun struct {
	r   *Runner
	dir string // the temporary directory it removes
	err error  // the run's first failure (or its set-up's)
	// drawn lists every op the run was given; performed the ops the
	// Runner stepped, each with the branch it took, up to the failing one.
	drawn, performed []spec.Op
	known            string // the known divergence the run stopped at
	stopped, failed  bool
}

// step performs op unless the run stopped, and returns the failure the
// property sees: nil for a known divergence, and for a failure other than
// the first failure's signature (shrinking keeps the failure it shrinks).
func (l *lockstep) step(run *lockstepRun, op spec.Op) error {
	run.drawn = append(run.drawn, op)
	if l.record || run.stopped {
		return nil
	}
	err := run.err
	if err == nil {
		_, err = run.r.stepGenerated(op)
	}
	if err == nil {
		return nil
	}
	run.stopped, run.err = true, err
	var kd *KnownDivergenceError
	if errors.As(err, &kd) {
		run.known = kd.ID
		return nil
	}
	sig := Signature(err)
	if l.sig == "" {
		l.sig = sig
	}
	if sig != l.sig {
		return nil
	}
	run.failed = true
	return err
}

// opCommand is one of the simulator's operations as a gopter command.
type opCommand struct {
	l  *lockstep
	op spec.Op
}

func (c opCommand) Run(sut commands.SystemUnderTest) commands.Result {
	if err := c.l.step(sut.(*lockstepRun), c.op); err != nil {
		return err
	}
	return nil
}

// NextState is the model's successor; PreCondition held, so there is one.
func (c opCommand) NextState(s commands.State) commands.State {
	st := s.(model.State)
	if outs := model.Step(&c.l.d, c.l.b, st, c.op); len(outs) == 1 {
		return outs[0].Next
	}
	return st
}

// PreCondition: the model enables the op in s, with one outcome the
// generator's options allow. A shrunk sequence that breaks it is never run.
func (c opCommand) PreCondition(s commands.State) bool {
	st := s.(model.State)
	outs := model.Step(&c.l.d, c.l.b, st, c.op)
	return len(outs) == 1 && (c.l.opt.Allow == nil || c.l.opt.Allow(&st, outs[0].Op))
}

// PostCondition: the model and the cache agreed on the step.
func (c opCommand) PostCondition(_ commands.State, res commands.Result) *gopter.PropResult {
	if err, ok := res.(error); ok {
		return &gopter.PropResult{Status: gopter.PropFalse, Labels: []string{err.Error()}}
	}
	return &gopter.PropResult{Status: gopter.PropTrue}
}

func (c opCommand) String() string { return c.op.String() }

// endCommand ends a sequence in a state where nothing may be drawn.
type endCommand struct{}

func (endCommand) Run(commands.SystemUnderTest) commands.Result { return nil }
func (endCommand) NextState(s commands.State) commands.State    { return s }
func (endCommand) PreCondition(commands.State) bool             { return true }
func (endCommand) PostCondition(commands.State, commands.Result) *gopter.PropResult {
	return &gopter.PropResult{Status: gopter.PropTrue}
}
func (endCommand) String() string { return "end" }
