package main

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/runtime"
	"github.com/xpwc/xpwc/spec"
)

// A program read from a file launches like a preset: cold, then warm with
// every layer a hit and the same output; --verify compares with heap packing.
func TestLaunchProgramFile(t *testing.T) {
	dir := t.TempDir()
	p, err := runtime.NewSynthetic("tiny", 7, []runtime.Layer{
		{Name: "a", N: 17, K: 9, Bias: true},
		{Name: "b", Input: "a", N: 5, K: 17},
	})
	require.NoError(t, err)
	prog := filepath.Join(dir, "tiny.prog")
	require.NoError(t, runtime.WriteProgramFile(prog, p))
	cachePath := filepath.Join(dir, "c.cache")

	launch := func() launchReport {
		var out, errb bytes.Buffer
		code := run(&env{stdout: &out, stderr: &errb}, []string{"launch", "--cache", cachePath, "--model", prog, "--verify", "--json"})
		require.Equal(t, exitOK, code, errb.String())
		var r launchReport
		require.NoError(t, json.Unmarshal(out.Bytes(), &r))
		return r
	}
	cold := launch()
	require.Equal(t, "missing", cold.Load)
	require.Equal(t, uint64(2), cold.Misses)
	require.Equal(t, 2, cold.Packed)
	require.NotNil(t, cold.Verified)
	require.True(t, *cold.Verified)

	warm := launch()
	require.Equal(t, "ok", warm.Load)
	require.Equal(t, 2, warm.EntriesLoaded)
	require.Equal(t, uint64(2), warm.Hits)
	require.Zero(t, warm.Misses)
	require.Zero(t, warm.Packed)
	require.Equal(t, cold.OutputDigest, warm.OutputDigest)
	require.Equal(t, cold.FileSize, warm.FileSize, "a warm launch writes nothing (G4)")
}

// committedEntries counts a file's committed index and treats anything
// else as none, so a launch on a rejected file reports 0 entries loaded.
func TestCommittedEntries(t *testing.T) {
	f, n := committedEntries(filepath.Join(t.TempDir(), "absent"))
	require.Zero(t, n)
	require.Equal(t, spec.FormatUnknown, f)
}

// simrun launch and bench run with the library's defaults: the cache
// settings their flags default to are those of the zero cache.Options, so
// a figure simrun measures is one a Go program gets without asking.
func TestSimrunDefaultsAreTheLibrarys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.xpwc")
	want, err := cache.Options{Path: path}.WithDefaults()
	require.NoError(t, err)
	withDefaults := func(cfg runtime.LaunchConfig) cache.Options {
		t.Helper()
		o, err := cfg.CacheOptions()
		require.NoError(t, err)
		o, err = o.WithDefaults()
		require.NoError(t, err)
		return o
	}
	var stderr strings.Builder
	cfg, _, code := parseLaunch(&env{stdout: io.Discard, stderr: &stderr}, []string{"--cache", path})
	require.Equal(t, -1, code, stderr.String())
	// The one setting a launch resolves itself: its lock wait comes from
	// its program's size (runtime.LockWaitFor), which the cache does not
	// know; simrun's --lock-wait auto is the runtime's zero.
	want.LockWait = runtime.LockWaitFor(cfg.Program)
	// A launch reuses one staging buffer (cache.Options.ReuseStaging): its
	// backend never touches a reservation after the insert.
	want.ReuseStaging = true
	require.Equal(t, want, withDefaults(cfg), "simrun launch")
	require.Equal(t, want, withDefaults(benchLaunchConfig(path, cfg.Program, cfg.Kernel)), "simrun bench")
}
