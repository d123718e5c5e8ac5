package model

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// docs/model.md documents every invariant, design and reachability goal;
// adding one without documenting it fails here.
func TestDocsListEverything(t *testing.T) {
	b, err := os.ReadFile("../docs/model.md")
	require.NoError(t, err)
	doc := string(b)
	for _, inv := range spec.Invariants() {
		assert.Contains(t, doc, "`"+string(inv.ID)+"`")
	}
	for _, d := range Designs() {
		assert.Contains(t, doc, "`"+d.Name+"`")
	}
	for _, c := range Covers() {
		assert.Contains(t, doc, "`"+c.Name+"`")
	}
}
