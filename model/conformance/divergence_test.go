package conformance

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/conform"
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
)

// The property must be able to fail, and its failure must replay: run on
// a deliberately broken implementation (the cache with v1's bug put back:
// entries keyed by name alone, conform's v1-no-seed adapter), it finds a
// stale hit after a kernel upgrade and writes a shrunk scenario; `simrun
// replay --exec` of that implementation fails on the scenario with the
// same divergence, and `simrun replay` of xpwc's cache passes it.
func TestBrokenImplementationFailsAndReplays(t *testing.T) {
	const broken = "v1-no-seed"
	a, err := conform.GoAdapter(broken)
	require.NoError(t, err)
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.DefaultBounds()
	p := property{cfg: sim.Config{Backend: sim.BackendOS, Open: a.Open}, d: d, b: b, steps: 60, found: "the " + broken + " implementation, seed %d"}
	dir := t.TempDir()
	_, _, fail, err := p.check(1, 50, dir)
	require.NoError(t, err)
	require.NotNil(t, fail, "an implementation that serves stale packings conforms?")
	t.Logf("found:\n%s", fail)

	bin := t.TempDir()
	for _, cmd := range []string{"simrun", "conform-adapter"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, cmd), "github.com/xpwc/xpwc/cmd/"+cmd).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	replay := func(args ...string) (string, int) {
		var out bytes.Buffer
		c := exec.Command(filepath.Join(bin, "simrun"), append([]string{"replay"}, args...)...)
		c.Stdout, c.Stderr = &out, &out
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return out.String(), code
	}
	out, code := replay("--exec", filepath.Join(bin, "conform-adapter")+" --design "+broken, fail.path)
	t.Logf("simrun replay --exec (broken):\n%s", out)
	require.Equal(t, 1, code, out)
	var derr *sim.DivergenceError
	require.ErrorAs(t, fail.Final, &derr)
	require.Contains(t, out, derr.Model)
	require.Contains(t, out, strings.SplitN(derr.Cache, " (", 2)[0])
	out, code = replay(fail.path)
	require.Equal(t, 0, code, out)
}
