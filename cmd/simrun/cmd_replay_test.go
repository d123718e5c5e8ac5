package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(&env{stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

const goodScenario = `# G4: a relaunch writes nothing.
init proc=A program=P1
----
load=missing place=file

lookup proc=A name=w0
----
miss

reserve proc=A name=w0
----
place=file

insert proc=A name=w0
----
ok

finalize proc=A
----
wrote
events: commit

file
----
valid w0=k0s0
`

func TestReplayFilePasses(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "good")
	require.NoError(t, os.WriteFile(p, []byte(goodScenario), 0o644))
	code, out, errs := runCmd(t, "replay", p)
	require.Equal(t, exitOK, code, out+errs)
	assert.Contains(t, out, "2 runs, 2 passed, 0 failed") // crashfs and os

	code, out, _ = runCmd(t, "replay", p, "-v", "--backend", "os")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "step 5: finalize proc=A")
	assert.Contains(t, out, "cache: file valid w0=k0s0")
	assert.Contains(t, out, "# G4: a relaunch writes nothing.")
}

func TestReplayWrongExpectationFails(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad")
	bad := strings.Replace(goodScenario, "valid w0=k0s0", "empty", 1)
	require.NoError(t, os.WriteFile(p, []byte(bad), 0o644))
	code, out, _ := runCmd(t, "replay", dir)
	assert.Equal(t, exitProblem, code)
	assert.Contains(t, out, "FAIL")
	assert.Contains(t, out, `"file": output differs`)
}

func TestReplayMisuseFails(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "misuse")
	require.NoError(t, os.WriteFile(p, []byte("# x\nlookup proc=A name=w0\n----\nmiss\n"), 0o644))
	code, out, _ := runCmd(t, "replay", p, "--backend", "crashfs")
	assert.Equal(t, exitProblem, code)
	assert.Contains(t, out, "not enabled")
}

func TestReplayEmbedded(t *testing.T) {
	code, out, errs := runCmd(t, "replay", "--backend", "model", "embedded")
	require.Equal(t, exitOK, code, out+errs)
	assert.Contains(t, out, "bug-v1-no-seed")
}

func TestReplayUsage(t *testing.T) {
	for _, args := range [][]string{
		{"replay"},
		{"replay", "--backend", "tape", "embedded"},
		{"replay", "/does/not/exist"},
		{"replay", "--nope"},
	} {
		code, _, _ := runCmd(t, args...)
		assert.Equal(t, exitUsage, code, args)
	}
}

// --rewrite fills in outputs (here: all of them left empty) and the file
// then replays clean; a file whose run fails is left alone.
func TestReplayRewrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "blank")
	blank := "# G4\ninit proc=A program=P1\n----\n\nlookup proc=A name=w0\n----\n\nfile\n----\n"
	require.NoError(t, os.WriteFile(p, []byte(blank), 0o644))
	code, out, errs := runCmd(t, "replay", "--rewrite", "--backend", "crashfs", p)
	require.Equal(t, exitOK, code, out+errs)
	assert.Contains(t, out, "rewrote "+p)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "# G4\ninit proc=A program=P1\n----\nload=missing place=file\n\nlookup proc=A name=w0\n----\nmiss\n\nfile\n----\nempty\n", string(b))

	bad := filepath.Join(dir, "misuse")
	text := "# x\nlookup proc=A name=w0\n----\n\n"
	require.NoError(t, os.WriteFile(bad, []byte(text), 0o644))
	code, _, _ = runCmd(t, "replay", "--rewrite", bad)
	assert.Equal(t, exitProblem, code)
	b, err = os.ReadFile(bad)
	require.NoError(t, err)
	assert.Equal(t, text, string(b))
}
