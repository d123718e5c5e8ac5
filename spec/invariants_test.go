package spec

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGuaranteeTable(t *testing.T) {
	gs := Guarantees()
	require.Len(t, gs, 8)
	for i, g := range gs {
		assert.Equal(t, GuaranteeID("G"+string(rune('1'+i))), g.ID)
		assert.NotEmpty(t, g.Title)
		assert.NotEmpty(t, g.Statement)
		got, ok := GuaranteeByID(g.ID)
		assert.True(t, ok)
		assert.Equal(t, g, got)
	}
	_, ok := GuaranteeByID("G9")
	assert.False(t, ok)
	// A fresh slice each call: a caller's edit does not leak.
	gs[0].Title = "changed"
	assert.Equal(t, "correct bytes", Guarantees()[0].Title)
}

func TestInvariantTable(t *testing.T) {
	idForm := regexp.MustCompile(`^I[0-9]+-[a-z0-9-]+$`)
	seen := map[InvariantID]bool{}
	served := map[GuaranteeID]bool{}
	for i, inv := range Invariants() {
		assert.Regexp(t, idForm, string(inv.ID))
		assert.Regexp(t, "^I"+strconv.Itoa(i+1)+"-", string(inv.ID), "IDs are numbered in order")
		assert.False(t, seen[inv.ID], "duplicate %s", inv.ID)
		seen[inv.ID] = true
		_, ok := GuaranteeByID(inv.Guarantee)
		assert.True(t, ok, "%s cites unknown guarantee %s", inv.ID, inv.Guarantee)
		served[inv.Guarantee] = true
		assert.NotEmpty(t, inv.Statement)
		got, ok := InvariantByID(inv.ID)
		assert.True(t, ok)
		assert.Equal(t, inv, got)
	}
	// Every guarantee is served by at least one invariant of the model.
	for _, g := range Guarantees() {
		assert.True(t, served[g.ID], "no invariant serves %s", g.ID)
	}
	_, ok := InvariantByID("I0-none")
	assert.False(t, ok)
}

func TestVerifyPolicyTable(t *testing.T) {
	ps := VerifyPolicies()
	require.Len(t, ps, 4)
	seen := map[VerifyPolicyID]bool{}
	for _, p := range ps {
		assert.Regexp(t, `^[a-z][a-z-]*$`, string(p.ID))
		assert.False(t, seen[p.ID], "duplicate %s", p.ID)
		seen[p.ID] = true
		assert.NotEmpty(t, p.When)
		assert.NotEmpty(t, p.Statement)
		got, ok := VerifyPolicyByID(p.ID)
		assert.True(t, ok)
		assert.Equal(t, p, got)
		// Only the policy that checks nothing waives I13.
		assert.Equal(t, p.ID != VerifyOff, p.KeepsNoUncheckedUse, p.ID)
	}
	_, ok := VerifyPolicyByID("on-open")
	assert.False(t, ok)
	ps[0].When = "changed"
	assert.NotEqual(t, "changed", VerifyPolicies()[0].When)
}
