package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/model/explore"
	"github.com/xpwc/xpwc/spec"
)

// Each bug scenario that names an explorer counterexample ("# explorer:
// <invariant>") replays exactly the explorer's shortest trace for its
// design and invariant: when the model changes and the explorer finds
// another trace, this test prints it so the scenario can be updated.
func TestBugScenariosAreExplorerTraces(t *testing.T) {
	files, err := Scenarios()
	require.NoError(t, err)
	results := map[string]explore.Result{}
	n := 0
	for _, f := range files {
		inv := headerValue(f.Text, "# explorer: ")
		if inv == "" {
			continue
		}
		n++
		design := ""
		var ops []string
		r, err := NewRunner(Config{Backend: BackendModel})
		require.NoError(t, err)
		for _, d := range parsed(t, f.Text) {
			switch fs := strings.Fields(d.Text); fs[0] {
			case "design":
				design, _ = argValue(fs[1:], "name")
			case "bounds":
				// The explorer runs at the scenario's bounds.
				_, err := r.Exec(d.Text)
				require.NoError(t, err, f.Name)
			case "file", "state", "stats":
			default:
				ops = append(ops, d.Text)
			}
		}
		b := r.Bounds()
		// A cover names a design's bug whose invariant has a shorter trace
		// (model.CoverReinitTruncates): the run goes to the depth bound.
		cover := inv == model.CoverReinitTruncates
		key := fmt.Sprintf("%s %+v %v", design, b, cover)
		res, ok := results[key]
		if !ok {
			d, err := model.DesignByName(design)
			require.NoError(t, err, f.Name)
			opts := explore.Options{Bounds: b, StopWhenFound: d.Expect}
			if cover {
				opts.StopWhenFound = nil
			}
			res, err = explore.Run(d, opts)
			require.NoError(t, err)
			results[key] = res
		}
		var trace []spec.Op
		if cover {
			c, ok := res.ReachedCover(inv)
			require.True(t, ok, "%s: the explorer no longer reaches %s for %s", f.Name, inv, design)
			trace = c.Trace
		} else {
			v, ok := res.Violated(spec.InvariantID(inv))
			require.True(t, ok, "%s: the explorer no longer finds %s for %s", f.Name, inv, design)
			trace = v.Trace
		}
		want := spec.FormatTrace(trace)
		if want == strings.Join(ops, "\n")+"\n" {
			continue
		}
		if os.Getenv("XPWC_SIM_REGEN") == "1" {
			require.NoError(t, os.WriteFile(filepath.Join(ScenarioDir, f.Name), []byte(retrace(t, f.Text, trace)), 0o644))
			t.Logf("%s: directives replaced by the explorer's trace; now run go test ./sim -run TestScenarios -rewrite", f.Name)
			continue
		}
		assert.Equal(t, want, strings.Join(ops, "\n")+"\n",
			"%s is not the explorer's shortest trace any more: XPWC_SIM_REGEN=1 go test ./sim -run TestBugScenariosAreExplorerTraces replaces its directives, then rewrite", f.Name)
	}
	assert.Equal(t, 18, n, "every bug scenario names its explorer counterexample")
}

func headerValue(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// retrace keeps a scenario's header comments, design and bounds directives
// and trailing inspection directives, and puts trace in place of its
// lifecycle directives, with empty expected output for a rewrite.
func retrace(t *testing.T, text string, trace []spec.Op) string {
	t.Helper()
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		b.WriteString(l + "\n")
	}
	ds := parsed(t, text)
	var tail []string
	for _, d := range ds {
		switch strings.Fields(d.Text)[0] {
		case "design", "bounds":
			b.WriteString(d.Text + "\n----\n\n")
		case "file", "state", "stats":
			tail = append(tail, d.Text)
		default:
			tail = tail[:0] // only inspections after the last op are kept
		}
	}
	for _, op := range trace {
		b.WriteString(op.String() + "\n----\n\n")
	}
	for _, d := range tail {
		b.WriteString(d + "\n----\n\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
