package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// ExpectedAt keeps out of a search's expectations exactly the bugs its
// bounds are too small for, and Widen grows the bounds until none is.
func TestExpectedAtAndWiden(t *testing.T) {
	d, err := DesignByName("executorch")
	require.NoError(t, err)
	reach, beyond := d.ExpectedAt(ExhaustiveBounds())
	assert.Equal(t, []spec.InvariantID{spec.InvNoStaleHit, spec.InvCommitSurvives}, beyond)
	assert.Len(t, reach, len(d.Expect)-2)
	assert.NotContains(t, reach, spec.InvNoStaleHit)

	w := d.Widen(ExhaustiveBounds())
	assert.Equal(t, 2, w.Names)
	assert.Equal(t, 2, w.Sources)
	reach, beyond = d.ExpectedAt(w)
	assert.Empty(t, beyond)
	assert.Equal(t, d.Expect, reach)

	// A design with no needs is unchanged by either.
	ref, err := DesignByName("repack-to-heap")
	require.NoError(t, err)
	reach, beyond = ref.ExpectedAt(ExhaustiveBounds())
	assert.Equal(t, ref.Expect, reach)
	assert.Empty(t, beyond)
	assert.Equal(t, ExhaustiveBounds(), ref.Widen(ExhaustiveBounds()))
}
