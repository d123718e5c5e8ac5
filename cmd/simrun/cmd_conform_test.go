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

// TestConform builds the adapter once for the subtests below.
func TestConform(t *testing.T) {
	bin := buildAdapter(t)
	t.Run("reference", func(t *testing.T) { testConformReference(t, bin) })
	t.Run("variant", func(t *testing.T) { testConformVariant(t, bin) })
	t.Run("replay-v2", func(t *testing.T) { testReplayV2Adapter(t, bin) })
}

// testReplayV2Adapter: simrun replay --exec runs a trace through an
// adapter the way conform does: the file of an adapter that does not
// claim format-v3 is not read as v3 (the v2 design's file is not a v3
// file, and a scenario it passes under conform passes under replay).
func testReplayV2Adapter(t *testing.T, bin string) {
	p := filepath.Join(t.TempDir(), "good")
	require.NoError(t, os.WriteFile(p, []byte(goodScenario), 0o644))
	code, out, errOut := runCmd(t, "replay", "--exec", bin+" --design no-commit-point", p)
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	require.Contains(t, out, "1 passed")
}

// testConformReference: `simrun conform --exec ADAPTER --json` on the Go
// reference adapter exits 0 with a report whose every field is snake_case
// and documented in docs/simrun.md; the text form ends with the counts.
func testConformReference(t *testing.T, bin string) {
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
	code = run(&env{stdout: &out, stderr: &errOut}, []string{"conform", "--exec", bin, "--walks", "2"})
	require.Equal(t, exitOK, code, "%s%s", out.String(), errOut.String())
	require.Regexp(t, `\d+ held, 0 broken, 0 protocol faults`, out.String())
	require.Regexp(t, `holds +walk seed=2`, out.String())
}

// testConformVariant: a design variant of the adapter exits 1, naming a
// broken invariant and the matching variant; the shrunk trace it writes
// fails through `simrun replay --exec` of the variant and passes through
// the reference.
func testConformVariant(t *testing.T, bin string) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code := run(&env{stdout: &out, stderr: &errOut}, []string{"conform", "--exec", bin + " --design v1-no-seed", "--walks", "0", "--out", dir})
	require.Equal(t, exitProblem, code, "%s%s", out.String(), errOut.String())
	require.Contains(t, out.String(), "breaks G1 I1-no-stale-hit; behaves like v1-no-seed")
	require.Regexp(t, `I1-no-stale-hit +broken`, out.String())
	files, err := filepath.Glob(filepath.Join(dir, "conform-*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out.Reset()
	require.Equal(t, exitProblem, run(&env{stdout: &out, stderr: &errOut}, []string{"replay", "--exec", bin + " --design v1-no-seed", files[0]}), out.String())
	out.Reset()
	require.Equal(t, exitOK, run(&env{stdout: &out, stderr: &errOut}, []string{"replay", "--exec", bin, files[0]}), out.String())
	require.Contains(t, out.String(), "1 passed")
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
	// An --out directory that does not exist is refused before anything
	// runs, not silently left unwritten.
	errOut.Reset()
	require.Equal(t, exitUsage, run(&env{stdout: &out, stderr: &errOut}, []string{"conform", "--exec", missing, "--out", filepath.Join(t.TempDir(), "nope")}))
	require.Contains(t, errOut.String(), "not a directory")
}
