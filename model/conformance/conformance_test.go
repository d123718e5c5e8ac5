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

// modelState is gopter's state: the model's state and the outcome of the
// last op, which PostCondition compares with the cache's observation.
type modelState struct {
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
}

func (c opCommand) Run(sut commands.SystemUnderTest) commands.Result {
	return sut.(*world).apply(c.op)
}

func (c opCommand) NextState(st commands.State) commands.State {
	ms := st.(modelState)
	outs := model.Step(c.d, c.b, ms.s, c.op)
	if len(outs) != 1 {
		return ms // PreCondition rejects it; gopter never runs it
	}
	return modelState{s: outs[0].Next, last: outs[0]}
}

func (c opCommand) PreCondition(st commands.State) bool {
	return len(model.Step(c.d, c.b, st.(modelState).s, c.op)) == 1
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
// enables there.
func protoCommands(d *model.Design, b model.Bounds, dir string, tally *tally) *commands.ProtoCommands {
	var alphabet []spec.Op
	for _, op := range model.Alphabet(b) {
		switch op.Kind {
		case spec.EvClobberOptions:
			continue // options belong to the module, not to the cache
		case spec.EvCrash:
			op.Branch = spec.BranchIdle
		}
		alphabet = append(alphabet, op)
	}
	return &commands.ProtoCommands{
		NewSystemUnderTestFunc: func(commands.State) commands.SystemUnderTest {
			w, err := newWorld(dir)
			if err != nil {
				panic(err) // the temporary directory is the harness's, not the cache's
			}
			w.tally = tally
			tally.seqs++
			return w
		},
		DestroySystemUnderTestFunc: func(sut commands.SystemUnderTest) { sut.(*world).close() },
		InitialStateGen:            gen.Const(modelState{s: model.Init(b)}),
		GenCommandFunc: func(st commands.State) gopter.Gen {
			s := st.(modelState).s
			var enabled []gen.WeightedGen
			for _, op := range alphabet {
				if len(model.Step(d, b, s, op)) == 1 {
					enabled = append(enabled, gen.WeightedGen{Weight: weight(op), Gen: gen.Const(opCommand{d: d, b: b, op: op})})
				}
			}
			return gen.Weighted(enabled)
		},
	}
}

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
	props.Property("cache conforms to the model", commands.Prop(protoCommands(&d, b, dir, &n)))
	props.TestingRun(t)
	el := time.Since(start).Seconds()
	t.Logf("%d sequences run (shrinking included), %d steps, %d hits, %d commits, %d foreign writes, %d corrupt entries caught, %.0f steps/s",
		n.seqs, n.steps, n.hits, n.commits, n.foreign, n.corrupt, float64(n.steps)/el)
}

// String keeps gopter's failure report to the op sequence.
func (ms modelState) String() string { return "start" }
