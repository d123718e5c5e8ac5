package cache_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// Every policy of spec's table is one cache policy and back, under the
// same name: flags, reports and docs say one thing.
func TestVerifyPoliciesAreSpecs(t *testing.T) {
	for _, row := range spec.VerifyPolicies() {
		p, ok := cache.PolicyByID(row.ID)
		require.True(t, ok, "spec policy %s has no cache policy", row.ID)
		assert.Equal(t, row.ID, p.ID())
		assert.Equal(t, string(row.ID), p.String())
		c, err := cache.Open(cache.Options{Path: tempPath(t), VerifyData: p})
		require.NoError(t, err, row.ID)
		require.NoError(t, c.Close())
	}
	for p := cache.VerifyPolicy(-1); p < 8; p++ {
		if p.ID() == "" {
			_, err := cache.Open(cache.Options{Path: tempPath(t), VerifyData: p})
			var oe *cache.OptionsError
			assert.ErrorAs(t, err, &oe, "policy %d has no spec name but is accepted", int(p))
			continue
		}
		_, ok := spec.VerifyPolicyByID(p.ID())
		assert.True(t, ok, "cache policy %s is not in spec's table", p)
	}
	_, ok := cache.PolicyByID("on-open")
	assert.False(t, ok)
}

// The zero Options are the measured defaults (docs/cache.md, "API"):
// data checked at the first Bytes of an entry (so a look-up of a rotten
// entry hits and its Bytes refuses the bytes), prefault and verify-ahead
// on. A Cache of Options{Path: p} is the cache the runtime launches with
// (impl/runtime TestLaunchDefaultsAreTheCacheDefaults).
func TestZeroOptionsAreTheMeasuredDefaults(t *testing.T) {
	o, err := cache.Options{}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, cache.DefaultVerifyData, o.VerifyData)
	assert.Equal(t, cache.VerifyOnCompute, cache.DefaultVerifyData)
	assert.False(t, o.DisablePrefault)
	assert.False(t, o.DisableVerifyAhead)
	assert.Equal(t, cache.DefaultVerifyData.ID(), cache.VerifyDefault.ID())

	opts := cache.Options{Path: tempPath(t)}
	ks := keys(2, 1)
	process(t, opts, ks)
	flipDataByte(t, opts.Path, ks[0])
	c := open(t, opts)
	require.NoError(t, c.InitializeForProgram("P"))
	h, hit := c.LookUp(ks[0])
	require.True(t, hit, "the look-up checked the data: the zero policy is not on-compute")
	_, err = c.Bytes(h)
	require.ErrorIs(t, err, cache.ErrCorruptData)
	require.NoError(t, c.Finalize())
}

// WithDefaults is idempotent: the Manager opens its cache from normalized
// options, which Open normalizes again, so a setting whose resolved value
// is another field's zero would turn into the default. A negative
// AllocateAhead (each region alone) did: it resolved to 0, which the
// second pass made DefaultAllocateAhead.
func TestWithDefaultsIsIdempotent(t *testing.T) {
	for _, o := range []cache.Options{
		{},
		{AllocateAhead: -1},
		{CompactGarbageRatio: -1},
		{VerifyData: cache.VerifyOff, LockWait: time.Second, FileMode: 0o644},
	} {
		once, err := o.WithDefaults()
		require.NoError(t, err)
		twice, err := once.WithDefaults()
		require.NoError(t, err)
		require.Equal(t, once, twice, "%+v", o)
	}
}
