package conformance

import (
	"bytes"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
)

// The harness must be able to fail: driven by a model of another design
// (v1 files, keyed without the seed), it must find that the real cache
// misses where that model hits after a kernel upgrade, and print a short
// scenario.
func TestHarnessCatchesADivergentModel(t *testing.T) {
	d, err := model.DesignByName("v1-no-seed")
	require.NoError(t, err)
	params := gopter.DefaultTestParametersWithSeed(7)
	params.MinSuccessfulTests = 3000
	params.MaxSize = 40
	props := gopter.NewProperties(params)
	var n tally
	props.Property("v1 model against the cache", commands.Prop(protoCommands(&d, bounds(), t.TempDir(), &n, setups...)))
	var out bytes.Buffer
	ok := props.Run(gopter.NewFormatedReporter(true, 100, &out))
	require.False(t, ok, "a model that serves stale packings conforms?")
	assert.Contains(t, out.String(), "look-up hit: model true, cache false")
	assert.Contains(t, out.String(), "upgrade-kernel")
	t.Logf("found after %d sequences:\n%s", n.seqs, out.String())
}
