package spec_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// TestLongNamesAmongShortOnes: the read window of a small index starts
// smaller than the largest legal entry and grows when one arrives; names of
// every length up to the maximum, between short ones, parse back exactly in
// both formats.
func TestLongNamesAmongShortOnes(t *testing.T) {
	var ws []spectest.Weight
	for i, n := range []int{1, 4000, 3, spec.MaxNameLen, 2, 4095, 4096, 7} {
		k := spec.Key{Weight: strings.Repeat(string(rune('a'+i)), n), Seed: uint32(i)}
		if i%2 == 1 {
			k.Bias = strings.Repeat("b", n)
		}
		ws = append(ws, spectest.Weight{Key: k, Data: []byte{byte(i)}})
	}
	v3, want3 := spectest.BuildV3(4096, ws)
	got3, err := parseV3(v3)
	require.NoError(t, err)
	assert.Equal(t, want3, got3.Entries)

	v2, want2 := spectest.BuildV2(4096, ws)
	got2, err := parseV2(v2)
	require.NoError(t, err)
	assert.Equal(t, want2, got2.Entries)
}
