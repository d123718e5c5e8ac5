package conformance

import (
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
func runnable(cfg worldConfig, s *model.State, op spec.Op, holder spec.Proc) bool {
	if cfg.v2 && !v2Demands(cfg, s, op) {
		return false
	}
	if op.Kind != spec.EvCrash || op.Branch != spec.BranchMidSave {
		return true
	}
	if cfg.backend != backendCrashFS || s.Disk.Lock != uint8(holder)+1 {
		return false
	}
	return op.Crash == spec.CrashPower || alone(s, op.Proc)
}

// v2Demands reports whether the harness demands the v2 design's outcome of
// op (docs/model.md, "v2 in conformance"). v2 stores no checksum, so a
// foreign write to an entry's bytes is served, and no source digest, so a
// source change is not seen once the process that packed the entry is
// gone: neither is generated. While the lock holder has appended space
// since its commit the file ends in that space, not in a footer: a process
// crash of the holder alone on crashfs leaves it so (the model's mid-save:
// no trailer parses, every entry is lost), any other end of the holder
// closes it, which ends the file with its last commit again (idle). A power
// loss then keeps or drops the appended space by which unsynced writes
// survive, an outcome the model does not predict: not generated.
func v2Demands(cfg worldConfig, s *model.State, op spec.Op) bool {
	switch op.Kind {
	case spec.EvForeign, spec.EvSourceChange:
		return false
	case spec.EvCrash:
		if !holderAppended(s) {
			// A holder writing a new file writes it under a temporary
			// name, which a crash leaves unused: the model's idle.
			return op.Branch != spec.BranchMidSave
		}
		if op.Crash == spec.CrashPower {
			return false
		}
		realCrash := cfg.backend == backendCrashFS && s.Disk.Lock == uint8(op.Proc)+1 && alone(s, op.Proc)
		return realCrash == (op.Branch == spec.BranchMidSave)
	}
	return true
}

// holderAppended reports whether the writer-lock holder has grown the
// live file since its commit: an entry packed or space reserved there. A
// holder that writes a new file (none yet, or replacing an unreadable one)
// writes it under a temporary name, so the live file keeps its end.
func holderAppended(s *model.State) bool {
	if s.Disk.Lock == 0 || s.Disk.State != model.DiskValid {
		return false
	}
	pr := &s.Procs[s.Disk.Lock-1]
	if pr.Replacing {
		return false
	}
	if s.Disk.Volatile > 0 {
		// Space appended since the commit and left as garbage (an insert
		// that found its packing already there): the file still ends in
		// it until the holder commits again.
		return true
	}
	for n := range pr.Ents {
		if e := &pr.Ents[n]; e.Status == spec.EntryAppended || e.ReservedInFile() {
			return true
		}
	}
	return false
}

// alone reports whether p is the only process with an instance.
func alone(s *model.State, p spec.Proc) bool {
	for q := range s.Procs {
		if spec.Proc(q) != p && s.Procs[q].Phase != spec.PhaseNoInstance {
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

// v2Setups are the filesystems the v2 property covers.
var v2Setups = []worldConfig{{backend: backendOS, v2: true}, {backend: backendCrashFS, v2: true}}

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

// TestConformanceV2 runs random op sequences on the model and the real
// cache in v2 (ExecuTorch's layout) in lockstep, held to ExecuTorch's
// trailer design (v2Design, what v2Demands allows). The default is bounded
// to a few seconds; XPWC_CONFORMANCE_SEQS sets the number of sequences for
// the long run.
func TestConformanceV2(t *testing.T) {
	d2, err := v2Design()
	require.NoError(t, err)
	b := bounds()
	seqs := envInt("XPWC_CONFORMANCE_SEQS", 40)
	seed := int64(envInt("XPWC_CONFORMANCE_SEED", int(time.Now().UnixNano()&0x7fffffff)))
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = seqs
	params.MaxSize = envInt("XPWC_CONFORMANCE_LEN", 40)
	params.MaxShrinkCount = 2000
	t.Logf("gopter seed %d (XPWC_CONFORMANCE_SEED=%d replays it), %d sequences of up to %d ops", seed, seed, seqs, params.MaxSize)
	props := gopter.NewProperties(params)
	var n tally
	start := time.Now()
	props.Property("v2 cache conforms to the trailer design", commands.Prop(protoCommands(&d2, b, t.TempDir(), &n, v2Setups...)))
	props.TestingRun(t)
	el := time.Since(start).Seconds()
	t.Logf("%d sequences run (shrinking included; by set-up %v), %d steps, %d hits, %d commits, %d power losses, %d crashes inside a commit, %.0f steps/s",
		n.seqs, n.bySetup, n.steps, n.hits, n.commits, n.powerLoss, n.midSave, float64(n.steps)/el)
}

// String keeps gopter's failure report to the op sequence.
func (ms modelState) String() string { return "start" }
