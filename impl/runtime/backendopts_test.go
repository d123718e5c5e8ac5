package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/runtime/options"
)

func TestParseBackendConfig(t *testing.T) {
	cfg, err := ParseBackendConfig(nil)
	require.NoError(t, err)
	assert.Equal(t, DefaultBackendConfig(), cfg)
	assert.True(t, cfg.WeightCacheEnabled)

	var m options.Map
	require.NoError(t, m.Set("OtherBackend", options.Option{Key: OptPackedCachePath, Value: options.Int(3)}))
	cfg, err = ParseBackendConfig(&m)
	require.NoError(t, err, "another backend's entry is not ours to check")
	assert.Equal(t, DefaultBackendConfig(), cfg)

	require.NoError(t, m.Set(XNNPACKBackendID,
		options.Option{Key: OptPackedCachePath, Value: options.String("/tmp/x.cache")},
		options.Option{Key: OptWeightCacheEnabled, Value: options.Bool(false)},
		options.Option{Key: OptSaveWeightCacheOnDisk, Value: options.Bool(true)},
		options.Option{Key: OptKernel, Value: options.String("f32-goi-nr8")},
	))
	cfg, err = ParseBackendConfig(&m)
	require.NoError(t, err)
	assert.Equal(t, BackendConfig{CachePath: "/tmp/x.cache", SaveOnDisk: true, Kernel: "f32-goi-nr8"}, cfg)

	for _, tc := range []struct {
		opt  options.Option
		want error
	}{
		{options.Option{Key: OptPackedCachePath, Value: options.Bool(true)}, options.ErrWrongType},
		{options.Option{Key: OptKernel, Value: options.Int(1)}, options.ErrWrongType},
		{options.Option{Key: OptWeightCacheEnabled, Value: options.Int(1)}, options.ErrWrongType},
		{options.Option{Key: OptSaveWeightCacheOnDisk, Value: options.String("true")}, options.ErrWrongType},
		{options.Option{Key: "workspace_sharing_mode", Value: options.Int(1)}, ErrUnknownOption},
	} {
		require.NoError(t, m.Set(XNNPACKBackendID, tc.opt))
		_, err := ParseBackendConfig(&m)
		require.ErrorIs(t, err, tc.want, tc.opt.Key)
	}
}
