package explore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// A violation's diagram has a lifeline per process, the file and the
// environment, an arrow per op (to the file when the op wrote it), and the
// last step in a red box with a note naming the invariant.
func TestMermaidMarksTheFailingStep(t *testing.T) {
	d, err := model.DesignByName("truncate-in-place")
	require.NoError(t, err)
	b := model.DefaultBounds()
	b.Depth = 8
	r, err := Run(d, Options{Bounds: b, StopWhenFound: d.Expect})
	require.NoError(t, err)
	v, ok := r.Violated(spec.InvNoSIGBUS)
	require.True(t, ok)
	pic, err := Mermaid(&d, b, v.Trace, -1, v.Invariant)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(pic), "\n")
	assert.Equal(t, "sequenceDiagram", lines[0])
	for _, p := range []string{"participant A", "participant B", "participant F as cache file", "participant E as environment"} {
		assert.Contains(t, pic, p)
	}
	assert.Equal(t, len(v.Trace)+5+3, len(lines), "a header, 4 lifelines, an arrow per op, the red box and its note:\n%s", pic)
	assert.Contains(t, pic, "->>F: finalize: commit")
	assert.Contains(t, pic, "E-xF: foreign kind=index")
	n := len(lines)
	assert.Equal(t, "    rect rgb(255, 210, 210)", lines[n-4])
	assert.Contains(t, lines[n-2], "Note over")
	assert.Contains(t, lines[n-2], "breaks I8-no-sigbus (G6)")
	assert.Equal(t, "    end", lines[n-1])

	_, err = Mermaid(&d, b, []spec.Op{{Kind: spec.OpFinalize}}, -1, v.Invariant)
	assert.ErrorIs(t, err, model.ErrNotEnabled, "a trace the model cannot replay is an error, not a picture")
}
