package conform

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildCTemplate compiles ctemplate/adapter.c with the system's C compiler,
// warnings as errors, and skips the test where there is none.
func buildCTemplate(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) on PATH: the C adapter template is not built")
	}
	bin := filepath.Join(t.TempDir(), "c-adapter")
	out, err := exec.Command(cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-o", bin, "ctemplate/adapter.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestCTemplate builds the C adapter template (ctemplate/adapter.c, a
// minimal cache in C behind the protocol) with the system's C compiler and
// runs conformance through it: every scenario and walk it can run holds;
// the rest needs capabilities it does not claim.
func TestCTemplate(t *testing.T) {
	bin := buildCTemplate(t)
	rep, err := Run(Options{Command: Command{Argv: []string{bin}}, Walks: 20, Steps: 40, Seed: 1, Names: 2})
	require.NoError(t, err)
	require.Equal(t, "c-template", rep.Adapter.Name)
	require.Equal(t, 2, rep.Adapter.Protocol, "the template speaks protocol 2")
	held, walked := 0, 0
	for _, s := range rep.Scenarios {
		switch s.Verdict {
		case Broken, Fault:
			t.Errorf("%s: %s: %s", s.Name, s.Verdict, s.Reason)
		case Holds:
			held++
			if s.Steps >= 20 {
				walked++
			}
		}
	}
	require.True(t, rep.OK())
	require.GreaterOrEqual(t, held, 20)
	require.GreaterOrEqual(t, walked, 10, "too few runs of 20 steps or more held")
	t.Logf("%d runs held (%d of 20 steps or more)", held, walked)
}

// TestCTemplateVersions: the C template answers a version 1 driver in
// version 1, and, in version 2, answers unsupported for a request it does
// not have (stats) and reads a compute as read_bytes.
func TestCTemplateVersions(t *testing.T) {
	bin := buildCTemplate(t)
	talk := func(lines ...string) []Response {
		cmd := exec.Command(bin)
		cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
		out, err := cmd.Output()
		require.NoError(t, err)
		var rs []Response
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var r Response
			require.NoError(t, json.Unmarshal([]byte(l), &r), l)
			rs = append(rs, r)
		}
		return rs
	}
	path := filepath.Join(t.TempDir(), "weights.bin")
	rs := talk(`{"id":1,"op":"hello","protocol":1}`)
	require.Equal(t, 1, rs[0].Protocol)
	rs = talk(`{"id":1,"op":"hello","protocol":2}`, `{"id":2,"op":"set_path","path":"`+path+`"}`,
		`{"id":3,"op":"stats"}`, `{"id":4,"op":"compute","handle":9}`, `{"id":5,"op":"destroy"}`)
	require.Len(t, rs, 5)
	require.Equal(t, 2, rs[0].Protocol)
	require.True(t, !rs[2].OK && rs[2].Unsupported, "stats: %+v", rs[2])
	require.True(t, !rs[3].OK && !rs[3].Unsupported && rs[3].Error == "stale handle", "compute: %+v", rs[3])
}
