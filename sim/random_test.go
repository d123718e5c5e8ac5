package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

func TestShrinkIsOneMinimal(t *testing.T) {
	ops, err := spec.ParseTrace("init proc=A program=P1\nupgrade-kernel\nlookup proc=A name=w0\nrestart proc=A\nrestart proc=B\n")
	require.NoError(t, err)
	// "fails" when both the upgrade and a restart of B are present.
	fails := func(o []spec.Op) bool {
		up, rb := false, false
		for _, x := range o {
			up = up || x.Kind == spec.EvKernelUpgrade
			rb = rb || (x.Kind == spec.EvRestart && x.Proc == 1)
		}
		return up && rb
	}
	got := Shrink(ops, func([]spec.Op) bool { return true }, fails)
	assert.Equal(t, "upgrade-kernel\nrestart proc=B\n", spec.FormatTrace(got))
}
