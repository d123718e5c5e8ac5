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
func TestScenarios(t *testing.T) { replayDir(t, ScenarioDir) }

// TestV2Scenarios replays the v2 histories of testdata/v2 (each opens
// with `format v2`) as TestScenarios does: what v2 gives up (a
// re-terminating commit, an empty index that removes the file, a crash in
// appended space that loses the whole cache) is held to V2Design by the
// rules of v2.go. They are not in the embedded suite, which every
// implementation runs (an implementation behind the protocol writes v3).
func TestV2Scenarios(t *testing.T) { replayDir(t, "testdata/v2") }

func replayDir(t *testing.T, dir string) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
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
