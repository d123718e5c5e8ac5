package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildAdapter builds cmd/conform-adapter into a temporary directory.
func buildAdapter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "conform-adapter")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/xpwc/xpwc/cmd/conform-adapter").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestConformReference: `simrun conform --exec ADAPTER --json` on the Go
// reference adapter exits 0 with a report whose every field is snake_case
// and documented in docs/simrun.md; the text form ends with the counts.
func TestConformReference(t *testing.T) {
	bin := buildAdapter(t)
	var out, errOut bytes.Buffer
	code := run(&env{stdout: &out, stderr: &errOut}, []string{"conform", "--exec", bin + " --design reference", "--json"})
	require.Equal(t, exitOK, code, "%s%s", out.String(), errOut.String())
	var v any
	require.NoError(t, json.Unmarshal(out.Bytes(), &v))
	names := map[string]bool{}
	fieldNames(v, names)
	docs, err := os.ReadFile("../../docs/simrun.md")
	require.NoError(t, err)
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		require.Regexp(t, snakeCase, n)
		require.Contains(t, string(docs), "`"+n+"`", "field %q of simrun conform --json is not in docs/simrun.md", n)
	}
	require.Contains(t, out.String(), `"verdict": "holds"`)

	out.Reset()
	code = run(&env{stdout: &out, stderr: &errOut}, []string{"conform", "--exec", bin})
	require.Equal(t, exitOK, code, "%s%s", out.String(), errOut.String())
	require.Regexp(t, `\d+ held, 0 broken, 0 protocol faults`, out.String())
}

// TestConformUsage: --exec is required; a command that cannot start is a
// problem (exit 1) with the reason, not a hang.
func TestConformUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, exitUsage, run(&env{stdout: &out, stderr: &errOut}, []string{"conform"}))
	require.Contains(t, errOut.String(), "--exec is required")
	errOut.Reset()
	missing := filepath.Join(t.TempDir(), "no-such-adapter")
	require.Equal(t, exitProblem, run(&env{stdout: &out, stderr: &errOut}, []string{"conform", "--exec", missing}))
	require.True(t, strings.Contains(errOut.String(), "start"), errOut.String())
}
