package conformance

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"
	"github.com/leanovate/gopter/gen"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// modelState is gopter's state: what the sequence runs on, the model's
// state and the outcome of the last op, which PostCondition compares with
// the cache's observation.
type modelState struct {
	cfg  worldConfig
	s    model.State
	last model.Outcome
}

// opCommand is one op of the vocabulary as a gopter command. Its String is
// the op's scenario text, so a failing (shrunk) sequence prints as a
// scenario that replays.
type opCommand struct {
	d  *model.Design
	b  model.Bounds
	op spec.Op
	// holder is the writer-lock holder whose commit a crash inside a
	// commit cuts, fixed when the command is generated; PreCondition drops
	// the command if shrinking moved the lock.
	holder spec.Proc
}

func (c opCommand) Run(sut commands.SystemUnderTest) commands.Result {
	return sut.(*world).apply(c.op, c.holder)
}

func (c opCommand) NextState(st commands.State) commands.State {
	ms := st.(modelState)
	outs := model.Step(c.d, c.b, ms.s, c.op)
	if len(outs) != 1 {
		return ms // PreCondition rejects it; gopter never runs it
	}
	return modelState{cfg: ms.cfg, s: outs[0].Next, last: outs[0]}
}

func (c opCommand) PreCondition(st commands.State) bool {
	ms := st.(modelState)
	return runnable(ms.cfg, &ms.s, c.op, c.holder) && len(model.Step(c.d, c.b, ms.s, c.op)) == 1
}

// runnable reports whether the harness can perform op in model state s on
// cfg's backend: a crash inside a commit needs crashfs, the commit's
// holder, and for a process crash no other process with an instance
// (crashfs crashes one process only when it is alone; see world.crash).
// It also needs no injected faults: the cut falls after the commit's first
// call that reaches crashfs, with the next one in flight, and a flush that
// an injector swallows moves that point, under lying flushes as far as the
// commit slot, which the model (commit point not reached) does not allow.
func runnable(cfg worldConfig, s *model.State, op spec.Op, holder spec.Proc) bool {
	if op.Kind != spec.EvCrash || op.Branch != spec.BranchMidSave {
		return true
	}
	if cfg.backend != backendCrashFS || cfg.faults != nil || s.Disk.Lock != uint8(holder)+1 {
		return false
	}
	if op.Crash == spec.CrashPower {
		return true
	}
	for p := range s.Procs {
		if spec.Proc(p) != op.Proc && s.Procs[p].Phase != spec.PhaseNoInstance {
			return false
		}
	}
	return true
}

func (c opCommand) PostCondition(st commands.State, res commands.Result) *gopter.PropResult {
	ms := st.(modelState)
	diffs := compare(c.b, ms.last, res.(observation))
	if len(diffs) == 0 {
		return &gopter.PropResult{Status: gopter.PropTrue}
	}
	return gopter.NewPropResult(false, c.op.String()+": "+strings.Join(diffs, "; "))
}

func (c opCommand) String() string { return c.op.String() }

// protoCommands generates, in every model state, one of the ops the model
// enables there and the harness can run. Each sequence runs on one of cfgs,
// drawn with it.
func protoCommands(d *model.Design, b model.Bounds, dir string, tally *tally, cfgs ...worldConfig) *commands.ProtoCommands {
	var alphabet []spec.Op
	for _, op := range model.Alphabet(b) {
		switch op.Kind {
		case spec.EvClobberOptions:
			continue // options belong to the module, not to the cache
		case spec.EvCrash:
			// A crash between operations everywhere; inside a commit where
			// runnable allows it (crashfs).
			for _, br := range []spec.Branch{spec.BranchIdle, spec.BranchMidSave} {
				op.Branch = br
				alphabet = append(alphabet, op)
			}
			continue
		}
		alphabet = append(alphabet, op)
	}
	starts := make([]any, len(cfgs))
	for i, c := range cfgs {
		starts[i] = modelState{cfg: c, s: model.Init(b)}
	}
	return &commands.ProtoCommands{
		NewSystemUnderTestFunc: func(st commands.State) commands.SystemUnderTest {
			cfg := st.(modelState).cfg
			w, err := newWorld(dir, cfg)
			if err != nil {
				panic(err) // the temporary directory is the harness's, not the cache's
			}
			w.tally = tally
			tally.seqs++
			if tally.bySetup == nil {
				tally.bySetup = map[string]int{}
			}
			tally.bySetup[cfg.String()]++
			return w
		},
		DestroySystemUnderTestFunc: func(sut commands.SystemUnderTest) { sut.(*world).close() },
		InitialStateGen:            gen.OneConstOf(starts...),
		GenCommandFunc: func(st commands.State) gopter.Gen {
			ms := st.(modelState)
			var holder spec.Proc
			if ms.s.Disk.Lock != 0 {
				holder = spec.Proc(ms.s.Disk.Lock - 1)
			}
			var enabled []gen.WeightedGen
			for _, op := range alphabet {
				if runnable(ms.cfg, &ms.s, op, holder) && len(model.Step(d, b, ms.s, op)) == 1 {
					enabled = append(enabled, gen.WeightedGen{Weight: weight(op), Gen: gen.Const(opCommand{d: d, b: b, op: op, holder: holder})})
				}
			}
			return gen.Weighted(enabled)
		},
	}
}

// setups are the filesystems every conformance run covers.
var setups = []worldConfig{{backend: backendOS}, {backend: backendCrashFS}}

// weight favours the packing protocol, so that launches complete and later
// launches hit, over events that reset progress.
func weight(op spec.Op) int {
	switch op.Kind {
	case spec.OpInit, spec.OpLookUp, spec.OpReserve, spec.OpInsert, spec.OpFinalize:
		return 20
	case spec.OpSave, spec.OpUnload, spec.OpDestroy, spec.OpInvalidate, spec.EvRestart:
		return 3
	}
	return 1
}

// TestConformance runs random op sequences on the model (reference design)
// and the real cache in lockstep. The default is bounded to a few seconds;
// XPWC_CONFORMANCE_SEQS sets the number of sequences for the long run.
// The sequences include foreign writes to the index and to entry data, so
// every initialization after one checks G7: the cache's load outcome is the
// model's (a recorded corrupt load, then a rebuild), never an error.
func TestConformance(t *testing.T) {
	d, err := harnessDesign()
	require.NoError(t, err)
	b := bounds()
	seqs := envInt("XPWC_CONFORMANCE_SEQS", 40)
	seed := int64(envInt("XPWC_CONFORMANCE_SEED", int(time.Now().UnixNano()&0x7fffffff)))
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = seqs
	params.MaxSize = envInt("XPWC_CONFORMANCE_LEN", 40)
	params.MaxShrinkCount = 2000
	dir := os.Getenv("XPWC_CONFORMANCE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	t.Logf("gopter seed %d (XPWC_CONFORMANCE_SEED=%d replays it), %d sequences of up to %d ops", seed, seed, seqs, params.MaxSize)
	props := gopter.NewProperties(params)
	var n tally
	start := time.Now()
	props.Property("cache conforms to the model", commands.Prop(protoCommands(&d, b, dir, &n, setups...)))
	props.TestingRun(t)
	el := time.Since(start).Seconds()
	t.Logf("%d sequences run (shrinking included; by set-up %v), %d steps, %d hits, %d commits, %d foreign writes, %d corrupt entries caught, %d power losses, %d crashes inside a commit, %.0f steps/s",
		n.seqs, n.bySetup, n.steps, n.hits, n.commits, n.foreign, n.corrupt, n.powerLoss, n.midSave, float64(n.steps)/el)
}

// String keeps gopter's failure report to the op sequence.
func (ms modelState) String() string { return "start" }
