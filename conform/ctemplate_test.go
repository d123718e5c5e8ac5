package conform

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCTemplate builds the C adapter template (ctemplate/adapter.c, a
// minimal cache in C behind the protocol) with the system's C compiler and
// runs conformance through it: every scenario and walk it can run holds;
// the rest needs capabilities it does not claim.
func TestCTemplate(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) on PATH: the C adapter template is not built")
	}
	bin := filepath.Join(t.TempDir(), "c-adapter")
	out, err := exec.Command(cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-o", bin, "ctemplate/adapter.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	rep, err := Run(Options{Command: Command{Argv: []string{bin}}, Walks: 20, Steps: 40, Seed: 1, Names: 2})
	require.NoError(t, err)
	require.Equal(t, "c-template", rep.Adapter.Name)
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
