package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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

func TestSuiteRejectsArguments(t *testing.T) {
	code, _, _ := runCmd(t, "--bogus")
	assert.Equal(t, exitUsage, code)
}
