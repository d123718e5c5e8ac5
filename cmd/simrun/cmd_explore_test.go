package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

func runExplore(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(&env{stdout: &out, stderr: &errb}, append([]string{"explore"}, args...))
	return code, out.String(), errb.String()
}

func TestExploreJSONViolation(t *testing.T) {
	code, out, errs := runExplore(t, "--design", "truncate-in-place", "--depth", "8", "--json")
	require.Equal(t, exitProblem, code, "a violation is a problem found")
	assert.Contains(t, errs, "done:", "progress goes to stderr")
	var got struct {
		Design      string  `json:"design"`
		States      int     `json:"states"`
		Transitions int     `json:"transitions"`
		Depth       int     `json:"depth"`
		Seconds     float64 `json:"seconds"`
		Violations  []struct {
			Invariant string   `json:"invariant"`
			TraceLen  int      `json:"trace_len"`
			Trace     []string `json:"trace"`
		} `json:"violations"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, "truncate-in-place", got.Design)
	assert.Equal(t, 8, got.Depth)
	assert.Positive(t, got.States)
	assert.Greater(t, got.Transitions, got.States)
	require.NotEmpty(t, got.Violations)
	v := got.Violations[0]
	assert.Equal(t, string(spec.InvNoSIGBUS), v.Invariant)
	assert.Equal(t, v.TraceLen, len(v.Trace))
	for _, line := range v.Trace {
		_, err := spec.ParseOp(line)
		assert.NoError(t, err, "trace lines parse back: %s", line)
	}
}

func TestExploreTextClean(t *testing.T) {
	code, out, errs := runExplore(t, "--depth", "6", "--quiet", "--sources", "1", "--foreign=false")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "design reference: depth 6")
	assert.Contains(t, out, "sources=1 foreign=false")
	assert.Contains(t, out, "violations: none")
	assert.Empty(t, errs, "--quiet")
}

func TestExploreAll(t *testing.T) {
	// Too shallow for several variants: --all must say so and fail.
	code, out, _ := runExplore(t, "--all", "--depth", "6", "--quiet")
	assert.Equal(t, exitProblem, code)
	assert.Contains(t, out, "NOT FOUND")
	assert.Contains(t, out, "borrowed-options")
}

// TestExploreListDesigns: --list-designs reports what exploring each
// design finds, not a list kept by hand: every historical bug of the
// catalog is among the invariants found, and the ones the catalog did not
// list (pr19862 also breaks I8, no-commit-point also I4) are shown.
func TestExploreListDesigns(t *testing.T) {
	// At model.DefaultBounds, depth-bounded: the explorer's own defaults run
	// every design to the end, which takes minutes.
	code, out, _ := runExplore(t, "--list-designs", "--json", "--depth", "14", "--programs", "2", "--sources", "2")
	require.Equal(t, exitOK, code)
	var rows []struct {
		Name   string   `json:"name"`
		Expect []string `json:"expect"`
		Found  []string `json:"found"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 11)
	assert.Equal(t, "reference", rows[0].Name)
	assert.Equal(t, "on-compute", rows[1].Name)
	for _, r := range rows[:2] {
		assert.Empty(t, r.Expect, r.Name)
		assert.Empty(t, r.Found, r.Name)
	}
	found := map[string][]string{}
	for _, r := range rows[2:] {
		// A bug the listing's bounds are too small for is not listed as
		// found (the design's ExpectNeeds): ExecuTorch's lost commit needs
		// a second name.
		d, err := model.DesignByName(r.Name)
		require.NoError(t, err)
		reachable, beyond := d.ExpectedAt(model.DefaultBounds())
		want := ids(reachable)
		for _, inv := range beyond {
			assert.NotContains(t, r.Found, string(inv), "%s at one name", r.Name)
		}
		assert.Subset(t, r.Found, want, r.Name)
		found[r.Name] = r.Found
	}
	assert.Contains(t, found["pr19862-no-index"], "I8-no-sigbus")
	assert.Contains(t, found["no-commit-point"], "I4-converge")
}

func TestExploreUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--design", "nope"},
		{"--depth", "-1"},
		{"--procs", "5"},
		{"--sources", "3"},
		{"--bogus"},
		{"extra"},
	} {
		code, _, errs := runExplore(t, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.NotEmpty(t, errs)
	}
}

// TestExploreLivenessLasso: run to the end, repack-to-heap's lasso is in the
// JSON liveness section, and --scenarios writes it as a scenario file the
// model replays and as a Mermaid diagram with the cycle in a loop box.
func TestExploreLivenessLasso(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runExplore(t, "--design", "repack-to-heap", "--programs", "1", "--kernels", "2", "--sources", "1",
		"--foreign=false", "--depth", "0", "--json", "--quiet", "--scenarios", dir)
	require.Equal(t, exitProblem, code, errs)
	var got struct {
		Exhausted bool `json:"exhausted"`
		Liveness  struct {
			Checked    bool    `json:"checked"`
			Seconds    float64 `json:"seconds"`
			Violations []struct {
				Invariant string   `json:"invariant"`
				Prefix    []string `json:"prefix"`
				Cycle     []string `json:"cycle"`
			} `json:"violations"`
		} `json:"liveness"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.True(t, got.Exhausted)
	assert.True(t, got.Liveness.Checked)
	assert.Positive(t, got.Liveness.Seconds, "the pass's own time")
	require.Len(t, got.Liveness.Violations, 1)
	assert.Equal(t, string(spec.InvConverge), got.Liveness.Violations[0].Invariant)
	assert.NotEmpty(t, got.Liveness.Violations[0].Cycle)
	lasso := filepath.Join(dir, "repack-to-heap-I4-converge-lasso")
	pic, err := os.ReadFile(lasso + ".mmd")
	require.NoError(t, err)
	assert.Contains(t, string(pic), "sequenceDiagram")
	assert.Contains(t, string(pic), "loop forever")
	var rout, rerr bytes.Buffer
	rc := run(&env{stdout: &rout, stderr: &rerr}, []string{"replay", "--backend", "model", lasso})
	assert.Equal(t, exitOK, rc, rout.String()+rerr.String())
}

// --scenarios into a directory that does not exist yet makes it, as
// simrun random does with --out, instead of exploring and then failing on
// the first write; one that cannot be made is an error before the search.
func TestExploreScenariosMakesItsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "cex")
	code, _, errs := runExplore(t, "--design", "repack-to-heap", "--programs", "1", "--kernels", "2", "--sources", "1",
		"--foreign=false", "--depth", "0", "--quiet", "--scenarios", dir)
	require.Equal(t, exitProblem, code, errs)
	assert.NotContains(t, errs, "no such file", errs)
	_, err := os.Stat(filepath.Join(dir, "repack-to-heap-I4-converge-lasso"))
	assert.NoError(t, err)

	// One that cannot be made is said before the search, naming the flag.
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	code, _, errs = runExplore(t, "--design", "repack-to-heap", "--depth", "4", "--scenarios", filepath.Join(file, "cex"))
	assert.Equal(t, exitUsage, code, errs)
	assert.Contains(t, errs, "--scenarios: mkdir")
	assert.NotContains(t, errs, "done:", "no search ran")
}

// --all at bounds too small for a design's bug says which flags reach it
// instead of failing or staying silent.
func TestExploreAllNamesWhatBoundsMiss(t *testing.T) {
	d, err := model.DesignByName("executorch")
	require.NoError(t, err)
	_, beyond := d.ExpectedAt(model.ExhaustiveBounds())
	assert.Equal(t, "I1-no-stale-hit needs --sources 2, I3-commit-survives needs --names 2", needsText(d, beyond))
}
