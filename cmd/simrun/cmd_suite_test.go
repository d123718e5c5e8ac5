package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The suite with small bounds: every part runs and prints its rows, and the
// exit code agrees with the rows.
func TestSuiteSmall(t *testing.T) {
	var out, errb bytes.Buffer
	code := runSuite(&env{stdout: &out, stderr: &errb},
		suiteOptions{exploreDepth: 8, randomRuns: 5, randomSteps: 30, osRuns: 2})
	s := out.String()
	for _, want := range []string{"scenarios", "known divergences", "explore", "random", "reference on crashfs"} {
		assert.Contains(t, s, want)
	}
	fails := strings.Count(s, " FAIL ")
	if fails == 0 {
		assert.Equal(t, exitOK, code, s+errb.String())
	} else {
		assert.Equal(t, exitProblem, code, s)
	}
}

// TestSuiteExploreFindsEveryBug: the main job's explore part, at its own
// bounds, finds every catalog bug and keeps the clean designs clean, so
// `go run ./cmd/simrun` exits 0 (a design whose bug needs wider bounds once
// made it exit 1 unnoticed).
func TestSuiteExploreFindsEveryBug(t *testing.T) {
	for _, r := range suiteExplore(defaultSuite()) {
		assert.True(t, r.ok, "%s: %s: %s", r.name, r.result, r.detail)
	}
}

func TestSuiteRejectsArguments(t *testing.T) {
	code, _, _ := runCmd(t, "--bogus")
	assert.Equal(t, exitUsage, code)
}

// TestSuiteDocsMatch: the figures docs/simrun.md gives for the no-command
// suite's random part are the ones the suite runs.
func TestSuiteDocsMatch(t *testing.T) {
	o := defaultSuite()
	b, err := os.ReadFile("../../docs/simrun.md")
	require.NoError(t, err)
	doc := string(b)
	for _, want := range []string{
		fmt.Sprintf("random runs of %d steps", o.randomSteps),
		fmt.Sprintf("%d with one name and %d", o.randomRuns, o.randomRuns/3),
		fmt.Sprintf("%d on the OS", o.osRuns),
		fmt.Sprintf("and %d with three\nnames and injected EIO", o.randomRuns/3),
	} {
		require.Contains(t, doc, want)
	}
}
