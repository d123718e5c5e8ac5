package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRewrite(t *testing.T) {
	in := "# head\n\ninit proc=A program=P1\n----\nold\n\n# between\nfile\n----\nstale\nlines\n\nstate\n----\nkept\n"
	out, err := Rewrite(in, map[int]string{3: "load=missing place=file", 8: "empty"})
	require.NoError(t, err)
	assert.Equal(t, "# head\n\ninit proc=A program=P1\n----\nload=missing place=file\n\n# between\nfile\n----\nempty\n\nstate\n----\nkept\n", out)

	// A replay of the rewritten text passes.
	rep := RunScenario(File{Name: "x", Text: "file\n----\nwrong\n"}, Config{Backend: BackendModel})
	require.Len(t, rep.Mismatches, 1)
	fixed, err := Rewrite("file\n----\nwrong\n", map[int]string{1: rep.Mismatches[0].Got})
	require.NoError(t, err)
	assert.True(t, RunScenario(File{Name: "x", Text: fixed}, Config{Backend: BackendModel}).OK(), fixed)
}
