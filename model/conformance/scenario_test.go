package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// TestScenarioFiles replays every op sequence in testdata (the common path
// of the lifecycle, and divergences found by random sequences, kept as
// regressions) in sim's lockstep world on crashfs and on the OS filesystem.
// XPWC_CONFORMANCE_SCENARIO names one more sequence to replay. A scenario
// file the property wrote replays with `simrun replay -v FILE`.
func TestScenarioFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	if p := os.Getenv("XPWC_CONFORMANCE_SCENARIO"); p != "" {
		files = append(files, p)
	}
	b := model.DefaultBounds()
	b.Names = 2
	for _, path := range files {
		text, err := os.ReadFile(path)
		require.NoError(t, err)
		ops, err := spec.ParseTrace(string(text))
		require.NoError(t, err)
		for _, backend := range []sim.Backend{sim.BackendCrashFS, sim.BackendOS} {
			t.Run(filepath.Base(path)+"/"+string(backend), func(t *testing.T) {
				cfg := sim.Config{Backend: backend, Dir: t.TempDir()}
				require.NoError(t, sim.RunOps(cfg, "", b, append([]spec.Op(nil), ops...)))
			})
		}
	}
}
