package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// The embedded suite covers every historical design and every guarantee:
// each variant has a bug-<design>* scenario whose replay shows each
// invariant the design is known to break, and each of G1–G8 has a
// g<N>-* scenario on the reference design that holds it.
func TestSuiteCoversDesignsAndGuarantees(t *testing.T) {
	files, err := Scenarios()
	require.NoError(t, err)
	for _, d := range model.Designs()[1:] {
		if len(d.Expect) == 0 {
			continue // a clean design: its scenarios are not bugs
		}
		var out strings.Builder
		n := 0
		for _, f := range files {
			if !strings.HasPrefix(f.Name, "bug-"+d.Name) {
				continue
			}
			n++
			rep := RunScenario(f, Config{Backend: BackendModel})
			require.True(t, rep.OK(), "%s: %v %v", f.Name, rep.Err, rep.Mismatches)
			for _, ds := range parsed(t, f.Text) {
				out.WriteString(ds.Expected + "\n")
			}
		}
		require.NotZero(t, n, "no scenario for design %s", d.Name)
		for _, inv := range d.Expect {
			assert.Contains(t, out.String(), "violates "+string(inv), "design %s", d.Name)
		}
	}
	for _, g := range spec.Guarantees() {
		prefix := strings.ToLower(string(g.ID)) + "-"
		found := false
		for _, f := range files {
			if strings.HasPrefix(f.Name, prefix) {
				found = true
				assert.NotContains(t, f.Text, "design name=", "%s must run the reference", f.Name)
				assert.Contains(t, f.Text, "# Guarantee "+string(g.ID), "%s must name its guarantee", f.Name)
			}
		}
		assert.True(t, found, "no scenario for %s", g.ID)
	}
}

// Every scenario opens with comment lines naming what it replays.
func TestScenariosOpenWithComments(t *testing.T) {
	files, err := Scenarios()
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		assert.True(t, strings.HasPrefix(f.Text, "# "), "%s", f.Name)
	}
}

func TestBackends(t *testing.T) {
	backends := func(text string) []Backend {
		bs, err := Backends(text)
		require.NoError(t, err)
		return bs
	}
	assert.Equal(t, []Backend{BackendModel}, backends("design name=v1-no-seed\n----\nx\n"))
	assert.Equal(t, []Backend{BackendModel}, backends("design=v1-no-seed\n----\nx\n"))
	assert.Equal(t, []Backend{BackendCrashFS}, backends("crash kind=power branch=idle\n----\nok\n"))
	assert.Equal(t, []Backend{BackendCrashFS, BackendOS}, backends("init proc=A program=P1\n----\nx\n"))
	_, err := Backends("init proc=A program=P1\nno separator\n")
	var se *SyntaxError
	require.ErrorAs(t, err, &se, "a parse error is not swallowed")
	require.Equal(t, 1, se.Line)
}

func TestHarnessMisuse(t *testing.T) {
	for _, line := range []string{
		"frobnicate",
		"lookup proc=A name=w0", // no program initialized
		"init proc=Z program=P1",
		"stats proc=A extra=1",
	} {
		r, err := NewRunner(Config{Backend: BackendCrashFS})
		require.NoError(t, err)
		_, err = r.Exec(line)
		assert.ErrorIs(t, err, ErrHarness, line)
		r.Close()
	}
	r, err := NewRunner(Config{Backend: BackendCrashFS})
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Exec("init proc=A program=P1")
	require.NoError(t, err)
	_, err = r.Exec("design name=v1-no-seed")
	assert.ErrorIs(t, err, ErrHarness, "design after the first op")
	_, err = NewRunner(Config{Backend: "tape"})
	assert.Error(t, err)
	_, err = NewRunner(Config{Backend: BackendCrashFS, Faults: "(bogus"})
	assert.Error(t, err)
}

func TestParseScenario(t *testing.T) {
	ds, err := ParseScenario("# c\n\nfile\n----\nempty\n\nstate\n----\n----\na\n\nb\n----\n----\n")
	require.NoError(t, err)
	require.Len(t, ds, 2)
	assert.Equal(t, "empty", ds[0].Expected)
	assert.Equal(t, "a\n\nb", ds[1].Expected)
	_, err = ParseScenario("file\nnot a separator\n")
	assert.Error(t, err)
}

func TestDesignShortForm(t *testing.T) {
	r, err := NewRunner(Config{Backend: BackendCrashFS})
	require.NoError(t, err)
	defer r.Close()
	out, err := r.Exec("design=v1-no-seed")
	require.NoError(t, err)
	assert.Contains(t, out, "v1-no-seed (model only)")
	assert.Equal(t, "v1-no-seed", r.Design().Name)
	_, err = r.Exec("design=nope")
	assert.ErrorIs(t, err, ErrHarness)
}

// parsed parses a scenario, failing the test on a syntax error.
func parsed(t *testing.T, text string) []Directive {
	t.Helper()
	ds, err := ParseScenario(text)
	require.NoError(t, err)
	return ds
}
