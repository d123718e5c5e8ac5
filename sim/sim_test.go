package sim

import (
	"os"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestScenarios replays every scenario file in lockstep on each backend it
// supports (Backends). Run with -rewrite to regenerate the expected output;
// a divergence between model and cache fails the run instead of being
// written.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, ScenarioDir, func(t *testing.T, path string) {
		text, err := os.ReadFile(path)
		require.NoError(t, err)
		backends, err := Backends(string(text))
		require.NoError(t, err)
		for _, b := range backends {
			t.Run(string(b), func(t *testing.T) {
				r, err := NewRunner(Config{Backend: b, Dir: t.TempDir()})
				require.NoError(t, err)
				defer r.Close()
				datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
					out, err := r.Exec(directive(d))
					if err != nil {
						t.Fatalf("%s: %v", d.Pos, err)
					}
					return out + "\n"
				})
			})
		}
	})
}

func directive(d *datadriven.TestData) string {
	parts := []string{d.Cmd}
	for _, a := range d.CmdArgs {
		parts = append(parts, a.String())
	}
	return strings.Join(parts, " ")
}
