package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// TestScenarioFiles replays every scenario in testdata (divergences gopter
// found, kept as regressions) in lockstep. XPWC_CONFORMANCE_SCENARIO names
// one more file to replay, for example a sequence gopter just printed:
//
//	XPWC_CONFORMANCE_SCENARIO=fail.txt go test ./model/conformance -run ScenarioFiles -v
func TestScenarioFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	if p := os.Getenv("XPWC_CONFORMANCE_SCENARIO"); p != "" {
		files = append(files, p)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) { replayFile(t, path) })
	}
}

func replayFile(t *testing.T, path string) {
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	ops, err := spec.ParseTrace(string(text))
	require.NoError(t, err)
	d, err := harnessDesign()
	require.NoError(t, err)
	for _, cfg := range setups {
		t.Run(cfg.String(), func(t *testing.T) {
			w, err := newWorld(t.TempDir(), cfg)
			require.NoError(t, err)
			defer w.close()
			err = w.run(&d, bounds(), ops, func(i int, out model.Outcome, o observation) {
				t.Logf("%2d %-40s model %+v | cache hit=%v load=%q commits=%d file=%v", i+1, out.Op, out.Result, o.hit, o.load, o.commits, o.file.entries)
			})
			require.NoError(t, err)
		})
	}
}
