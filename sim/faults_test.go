package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

func TestSeededFaultsRewrite(t *testing.T) {
	got, err := SeededFaults("(any (randomly 0.05 9 reads eio) (if (randomly 0.1 3) enospc))")
	require.NoError(t, err)
	assert.Equal(t, "(any (randomCalls 0.05 9 reads eio) (if (randomCalls 0.1 3) enospc))", got)
	_, err = SeededFaults("(randomly 2 9 eio)")
	require.ErrorIs(t, err, errorfs.ErrSyntax)
}

// recorder notes which calls its injector failed, in call order.
type recorder struct {
	inner errorfs.Injector
	log   []string
}

func (r *recorder) MaybeError(op errorfs.Op) error {
	err := r.inner.MaybeError(op)
	if err != nil {
		// The kind and the call's position, not the path: temporary names
		// are random.
		r.log = append(r.log, fmt.Sprintf("%d:%s", len(r.log), op.Kind))
	}
	return err
}

func (r *recorder) String() string { return r.inner.String() }

// A seeded fault run injects the same faults on every invocation, so a
// failure found by simrun random --faults replays from its seed. With the
// per-path form this fails: the temporary files of replacements and
// compactions get random names, and each new name starts a new generator.
func TestSeededFaultsReproduce(t *testing.T) {
	faults, err := SeededFaults("(randomly 0.08 9 eio)")
	require.NoError(t, err)
	b := model.DefaultBounds()
	b.Names = 3
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	injected := 0
	for seed := uint64(1); seed <= 12; seed++ {
		ops := Generate(seed, 60, d, b, GenOptions{Power: true})
		run := func() []string {
			rec := &recorder{}
			cfg := Config{Backend: BackendCrashFS, Faults: faults, AnyViolation: true,
				wrapFaults: func(inj errorfs.Injector) errorfs.Injector { rec.inner = inj; return rec }}
			_ = runOpsWith(cfg, b, ops)
			return rec.log
		}
		first, second := run(), run()
		require.Equal(t, strings.Join(first, " "), strings.Join(second, " "), "seed %d", seed)
		injected += len(first)
	}
	require.Positive(t, injected, "the runs injected faults")
}

func runOpsWith(cfg Config, b model.Bounds, ops []spec.Op) error {
	return RunOps(cfg, "", b, ops)
}

// Once a fault reached the cache, a hit on bytes changed behind the
// instance passes only if the instance packed or checked that packing
// itself (I2); before, the model's bytes are demanded.
func TestFaultCompareChangedBytes(t *testing.T) {
	r, err := NewRunner(Config{Backend: BackendCrashFS, Faults: "(randomCalls 0 1 eio)"})
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Exec("init proc=A program=P1")
	require.NoError(t, err)
	r.surfaced = true // as after an injected fault: safety only
	op, err := spec.ParseOp("lookup proc=A name=w0")
	require.NoError(t, err)
	out := model.Outcome{Op: op, Result: spec.Result{Hit: true, Bytes: spec.Packing{Intact: true}}}
	changed := spec.Result{Hit: true, Bytes: spec.Packing{}}
	require.NotNil(t, r.compare(out, changed), "never checked by A: a divergence")
	r.real.procs[0].checked[0] = true
	assert.Nil(t, r.compare(out, changed), "checked by A before the change: I2 allows it")
	r.surfaced = false // no fault has reached the cache: held to the model in full
	assert.NotNil(t, r.compare(out, changed), "before any fault, the model's bytes")
	wrong := spec.Result{Hit: true, Bytes: spec.Packing{Kernel: 1, Intact: true}}
	assert.NotNil(t, r.compare(out, wrong), "another packing is never allowed")
}
