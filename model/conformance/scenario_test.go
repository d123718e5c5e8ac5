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
	b := bounds()
	w, err := newWorld(t.TempDir())
	require.NoError(t, err)
	defer w.close()
	s := model.Init(b)
	for i, op := range ops {
		outs := model.Step(&d, b, s, op)
		require.Len(t, outs, 1, "op %d %s: not enabled in the model", i+1, op)
		o := w.apply(op)
		diffs := compare(b, outs[0], o)
		t.Logf("%2d %-40s model %+v | cache hit=%v load=%q commits=%d file=%v", i+1, op, outs[0].Result, o.hit, o.load, o.commits, o.file.entries)
		require.Empty(t, diffs, "op %d %s", i+1, op)
		s = outs[0].Next
	}
}
