package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	code, out, _ := runExplore(t, "--list-designs", "--json")
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
		assert.Subset(t, r.Found, r.Expect, r.Name)
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
