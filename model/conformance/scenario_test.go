package conformance

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// TestScenarioFile replays a scenario (one op per line, as gopter prints a
// failing sequence and the explorer prints a trace) in lockstep and logs
// every step, to study a divergence:
//
//	XPWC_CONFORMANCE_SCENARIO=fail.txt go test ./model/conformance -run ScenarioFile -v
func TestScenarioFile(t *testing.T) {
	path := os.Getenv("XPWC_CONFORMANCE_SCENARIO")
	if path == "" {
		t.Skip("XPWC_CONFORMANCE_SCENARIO not set")
	}
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
