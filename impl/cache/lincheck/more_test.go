package lincheck_test

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/cache/lincheck"
	"github.com/xpwc/xpwc/spec"
)

// mix counts a history's operations by kind and outcome, so that a passing
// check is seen to cover hits, misses, replacements, dropped reservations
// and refused lifecycle calls.
func mix(h []porcupine.Operation) string {
	m := map[string]int{}
	for _, op := range h {
		in, out := op.Input.(lincheck.Input), op.Output.(lincheck.Output)
		k := in.Kind.String()
		switch {
		case out.Err != lincheck.ErrNone:
			k += ":" + out.Err.String()
		case (in.Kind == lincheck.KindLookUp || in.Kind == lincheck.KindLookUp2) && out.Hit:
			k += ":hit"
		case in.Kind == lincheck.KindLookUp || in.Kind == lincheck.KindLookUp2:
			k += ":miss"
		}
		m[k]++
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf(" %s=%d", k, m[k])
	}
	return s
}

func requireCovers(t *testing.T, h []porcupine.Operation, kinds ...string) {
	t.Helper()
	s := mix(h)
	t.Log("mix:", s)
	for _, k := range kinds {
		require.Contains(t, s, " "+k+"=", "the workload never produced %s", k)
	}
}

// TestLinearizableHeapOnly: a cache without a path; releasing a program
// drops heap entries nobody holds, which the model predicts exactly.
func TestLinearizableHeapOnly(t *testing.T) {
	c := newCache(t, cache.Options{})
	h := runAndCheck(t, c, workload(4), lincheck.ModelConfig{HeapOnly: true})
	requireCovers(t, h, "lookup:hit", "lookup:miss", "insert", "insert:not-reserved", "init:program-active", "delete", "finalize")
}

// TestLinearizableViaManager: every call goes through Manager.Get and its
// release while the test holds one reference: all must reach one instance.
func TestLinearizableViaManager(t *testing.T) {
	m := cache.NewManager(nil)
	opts := cache.Options{Path: filepath.Join(t.TempDir(), "cache.xpwc")}
	c, release, err := m.Get(opts)
	require.NoError(t, err)
	h := runAndCheck(t, lincheck.ViaManager{M: m, Opts: opts}, workload(5), lincheck.ModelConfig{})
	requireCovers(t, h, "lookup:hit", "lookup:miss", "insert", "save", "delete", "finalize")
	require.Equal(t, 1, m.Live())
	require.NoError(t, c.Check())
	release()
	require.Equal(t, 0, m.Live())
}

// TestLinearizableWarm: the file holds a committed entry per name, packed by
// an earlier instance; the first init loads it, look-ups of the committed
// variant hit it (handles bound on first sight) and the workload replaces
// it concurrently.
func TestLinearizableWarm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.xpwc")
	w := workload(6)
	warm := make([]uint8, w.Names)
	{
		c, err := cache.Open(cache.Options{Path: path})
		require.NoError(t, err)
		require.NoError(t, c.InitializeForProgram("seed"))
		for n := range w.Names {
			buf, err := c.ReserveSpace(lincheck.Size(n))
			require.NoError(t, err)
			v := uint8(n % w.Variants)
			lincheck.Pack(buf, n, v)
			_, err = c.LookUpOrInsert(lincheck.Key(n, v), buf)
			require.NoError(t, err)
			warm[n] = v + 1
		}
		require.NoError(t, c.Finalize())
		require.Equal(t, uint64(1), c.Stats().Commits)
		closeAfterRun(t, c)
	}
	c := newCache(t, cache.Options{Path: path})
	h := runAndCheck(t, c, w, lincheck.ModelConfig{Warm: warm})
	require.Equal(t, spec.LoadOK, c.Stats().Load)
	requireCovers(t, h, "lookup:hit", "insert")

	// The model is told what is in the file: told nothing, the first hit on
	// a loaded entry is impossible.
	_, err := lincheck.Check(lincheck.NewModel(lincheck.ModelConfig{}), h, illegalOpts(t))
	require.ErrorIs(t, err, lincheck.ErrNotLinearizable)
}

// TestUndecidedIsFailure: a check that runs out of time is an error, not a
// pass (porcupine's Unknown).
func TestUndecidedIsFailure(t *testing.T) {
	c := newCache(t, cache.Options{})
	w := workload(9)
	w.Clients = 8
	h := runAndCheck(t, c, w, lincheck.ModelConfig{HeapOnly: true})
	opts := illegalOpts(t)
	opts.Timeout = time.Nanosecond
	rep, err := lincheck.Check(lincheck.NewModel(lincheck.ModelConfig{HeapOnly: true, NoPartition: true}), h, opts)
	require.ErrorIs(t, err, lincheck.ErrUndecided)
	require.Equal(t, porcupine.Unknown, rep.Result)
}

// TestMutatedHistoryIllegal: the check is not vacuous. A recorded passing
// history with one hit's handle changed, or one miss turned into a hit, is
// illegal.
func TestMutatedHistoryIllegal(t *testing.T) {
	c := newCache(t, cache.Options{Path: filepath.Join(t.TempDir(), "cache.xpwc")})
	h := runAndCheck(t, c, workload(8), lincheck.ModelConfig{})
	model := lincheck.NewModel(lincheck.ModelConfig{})
	mutated := 0
	for i, op := range h {
		in, out := op.Input.(lincheck.Input), op.Output.(lincheck.Output)
		if in.Kind != lincheck.KindLookUp || !out.Hit {
			continue
		}
		bad := append([]porcupine.Operation(nil), h...)
		out.Handle += 100000 // a handle no insert ever returned
		bad[i].Output = out
		_, err := lincheck.Check(model, bad, illegalOpts(t))
		require.ErrorIs(t, err, lincheck.ErrNotLinearizable, "op %d", i)
		mutated++
		if mutated == 3 {
			break
		}
	}
	require.Equal(t, 3, mutated)
}

// TestPendingOperation: an operation that never returned is recorded with
// Return = MaxInt64 and an unknown output; its effect may or may not have
// happened, and the model accepts either.
func TestPendingOperation(t *testing.T) {
	c := newCache(t, cache.Options{})
	rec, hs := lincheck.NewRecorder(), lincheck.NewHandleTable()
	p := rec.Call(0, lincheck.Input{Kind: lincheck.KindInit, Program: 0})
	p.Return(lincheck.Output{Err: lincheck.Classify(c.InitializeForProgram("p0"))})
	// Client 1 reserves and inserts v0 but its return is never recorded
	// (as if it hung).
	p = rec.Call(1, lincheck.Input{Kind: lincheck.KindReserve, Name: 0})
	buf, err := c.ReserveSpace(lincheck.Size(0))
	p.Return(lincheck.Output{})
	require.NoError(t, err)
	lincheck.Pack(buf, 0, 0)
	_ = rec.Call(1, lincheck.Input{Kind: lincheck.KindInsert, Name: 0, Variant: 0})
	_, err = c.LookUpOrInsert(lincheck.Key(0, 0), buf)
	require.NoError(t, err)
	lookUp(rec, c, hs, 2, 0, 0)

	hist := rec.History()
	require.Equal(t, int64(math.MaxInt64), hist[2].Return)
	require.True(t, hist[2].Output.(lincheck.Output).Unknown)
	_, err = lincheck.Check(lincheck.NewModel(lincheck.ModelConfig{HeapOnly: true}), hist, checkOpts(t))
	require.NoError(t, err)

	// Without the pending insert the hit has no cause.
	_, err = lincheck.Check(lincheck.NewModel(lincheck.ModelConfig{HeapOnly: true}), append(hist[:2:2], hist[3]), illegalOpts(t))
	require.ErrorIs(t, err, lincheck.ErrNotLinearizable)
}

// TestLinearizableV2: the same workload writing ExecuTorch's v2 format,
// where entries are keyed by the concatenated name and the seed only (the
// workload's variants differ in their seed, so v2 tells them apart).
func TestLinearizableV2(t *testing.T) {
	c := newCache(t, cache.Options{Path: filepath.Join(t.TempDir(), "cache.xpwc"), Format: spec.FormatV2})
	h := runAndCheck(t, c, workload(10), lincheck.ModelConfig{})
	requireCovers(t, h, "lookup:hit", "insert", "compact", "invalidate")
}
