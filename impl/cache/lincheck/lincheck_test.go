package lincheck_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/cache/lincheck"
)

// long reports whether the heavier variants run (XPWC_LONG=1).
func long() bool { return os.Getenv("XPWC_LONG") == "1" }

// checkOpts are the options of a check that must pass. Should it fail, its
// visualization goes to $XPWC_ARTIFACTS or else to a directory under the
// system temp directory that outlives the test (t.TempDir would delete the
// file the failure message names).
func checkOpts(t *testing.T) lincheck.CheckOptions {
	return lincheck.CheckOptions{
		Timeout:     20 * time.Second,
		ArtifactDir: filepath.Join(os.TempDir(), "xpwc-lincheck"),
		Name:        strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()),
	}
}

// illegalOpts are the options of a check that must find the history
// illegal: its visualization goes to t.TempDir().
func illegalOpts(t *testing.T) lincheck.CheckOptions {
	o := checkOpts(t)
	o.ArtifactDir = t.TempDir()
	return o
}

// runAndCheck runs w on target and checks the history, partitioned by name
// and whole.
func runAndCheck(t *testing.T, target lincheck.Target, w lincheck.Workload, cfg lincheck.ModelConfig) []porcupine.Operation {
	t.Helper()
	rec := lincheck.NewRecorder()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	errs := lincheck.Run(ctx, target, w, rec, lincheck.NewHandleTable())
	run := time.Since(start)
	require.Empty(t, errs)
	h := rec.History()
	rep, err := lincheck.Check(lincheck.NewModel(cfg), h, checkOpts(t))
	require.NoError(t, err)
	require.Equal(t, porcupine.Ok, rep.Result)
	// The whole history as well, so that whole-cache operations sit at one
	// point for every name. Up to 8 clients it costs about what the split
	// check does; with 16 it does not finish in the timeout (measured in
	// docs/concurrency.md), so wider runs are checked by name only.
	if w.Clients > 8 {
		t.Logf("clients=%d ops=%d run=%v check: %d partitions %v", w.Clients, rep.Ops, run, rep.Partitions, rep.Duration)
		return h
	}
	whole := cfg
	whole.NoPartition = true
	// Whole checks of file-backed histories vary most (90 ms to 8 s under
	// -race for the same size), hence the longer bound.
	wopts := checkOpts(t)
	wopts.Timeout = time.Minute
	wrep, err := lincheck.Check(lincheck.NewModel(whole), h, wopts)
	require.NoError(t, err)
	t.Logf("clients=%d ops=%d run=%v check: %d partitions %v, whole %v", w.Clients, rep.Ops, run, rep.Partitions, rep.Duration, wrep.Duration)
	return h
}

func newCache(t *testing.T, opts cache.Options) *cache.Cache {
	t.Helper()
	c, err := cache.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, c.Check())
		closeAfterRun(t, c)
	})
	return c
}

func workload(seed uint64) lincheck.Workload {
	w := lincheck.Workload{Clients: 8, Ops: 100, Names: 4, Variants: 2, Programs: 3, Seed: seed}
	if long() {
		w.Clients, w.Ops = 16, 400
	}
	return w
}

// TestLinearizableFileBacked: eight goroutines on one file-backed cache (G6).
func TestLinearizableFileBacked(t *testing.T) {
	seeds := uint64(2)
	if long() {
		seeds = 10
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		c := newCache(t, cache.Options{Path: filepath.Join(t.TempDir(), "cache.xpwc")})
		runAndCheck(t, c, workload(seed), lincheck.ModelConfig{})
	}
}

// closeAfterRun closes a cache a random history ran on. The history may
// end with packings no commit holds (inserted after the last Finalize or
// Save); Close says so with cache.ErrUncommitted, and that is all it may
// say.
func closeAfterRun(t testing.TB, c *cache.Cache) {
	t.Helper()
	if err := c.Close(); !errors.Is(err, cache.ErrUncommitted) {
		require.NoError(t, err)
	}
}
