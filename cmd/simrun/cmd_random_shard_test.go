package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomJSON runs simrun random with --json and decodes its summary.
func randomJSON(t *testing.T, args ...string) (int, randomSummary) {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"random", "--json"}, args...)...)
	var s randomSummary
	require.NoError(t, json.Unmarshal([]byte(out), &s), "stdout: %s\nstderr: %s", out, errs)
	s.WallMS = 0
	return code, s
}

// TestRandomParallelDeterministic: --parallel changes the wall time, never
// the result.
func TestRandomParallelDeterministic(t *testing.T) {
	args := []string{"--design", "borrowed-options", "--runs", "12", "--steps", "30", "--names", "2", "--out", t.TempDir()}
	code1, one := randomJSON(t, append(args, "--parallel", "1")...)
	code3, three := randomJSON(t, append(args, "--parallel", "3")...)
	require.Equal(t, code1, code3)
	require.Equal(t, one, three)
	require.NotEmpty(t, one.Failures, "the variant's bug is found")
}

// TestRandomShardsMerge: the shards of a campaign cover its seeds exactly,
// and merging their summaries gives the campaign's totals and failures.
func TestRandomShardsMerge(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--design", "borrowed-options", "--runs", "10", "--steps", "30", "--seed", "5", "--out", dir}
	wantCode, whole := randomJSON(t, args...)
	var paths []string
	for i := range 3 {
		_, s := randomJSON(t, append(args, "--shard", strconv.Itoa(i)+"/3")...)
		b, err := json.Marshal(s)
		require.NoError(t, err)
		p := filepath.Join(dir, "shard"+strconv.Itoa(i)+".json")
		require.NoError(t, os.WriteFile(p, b, 0o600))
		paths = append(paths, p)
	}
	code, out, errs := runCmd(t, append([]string{"random", "merge"}, paths...)...)
	require.Equal(t, wantCode, code, errs)
	var merged randomSummary
	require.NoError(t, json.Unmarshal([]byte(out), &merged))
	require.Equal(t, whole.Runs, merged.Runs)
	require.Equal(t, whole.Ops, merged.Ops)
	require.Equal(t, whole.Agreed, merged.Agreed)
	require.Equal(t, whole.Known, merged.Known)
	require.Equal(t, whole.Failures, merged.Failures)
	require.Equal(t, [2]int{5, 15}, [2]int{merged.SeedLo, merged.SeedHi})
	require.Contains(t, errs, "merged 3 shards: 10 runs")

	// A shard twice counts seeds twice; a missing shard leaves seeds out.
	code, _, errs = runCmd(t, "random", "merge", paths[0], paths[0])
	require.Equal(t, exitProblem, code)
	require.Contains(t, errs, "counted twice")
	code, _, errs = runCmd(t, "random", "merge", paths[0], paths[2])
	require.Equal(t, exitProblem, code)
	require.Contains(t, errs, "seeds missing")
}

func TestRandomShardUsage(t *testing.T) {
	for _, s := range []string{"3/3", "-1/2", "1", "a/b", "0/0"} {
		code, _, errs := runCmd(t, "random", "--shard", s)
		require.Equal(t, exitUsage, code, s)
		require.Contains(t, errs, "--shard", s)
	}
}

// TestRandomParallelReference: the reference design against the real cache
// on both backends, in parallel, gives the same summary as one at a time
// (run under -race, it checks the runs share nothing).
func TestRandomParallelReference(t *testing.T) {
	for _, backend := range []string{"crashfs", "os"} {
		args := []string{"--runs", "6", "--steps", "40", "--names", "3", "--backend", backend, "--out", t.TempDir()}
		code1, one := randomJSON(t, append(args, "--parallel", "1")...)
		code2, two := randomJSON(t, append(args, "--parallel", "2")...)
		require.Equal(t, exitOK, code1)
		require.Equal(t, code1, code2)
		require.Equal(t, one, two)
		require.Equal(t, 6*40, one.Ops)
	}
}
