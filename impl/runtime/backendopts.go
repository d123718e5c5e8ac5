package runtime

import (
	"fmt"

	"github.com/xpwc/xpwc/impl/runtime/options"
)

// XNNPACKBackendID is the backend id whose entry in an options.Map
// configures the Backend, as ExecuTorch's XnnpackBackend reads its own.
const XNNPACKBackendID = "XnnpackBackend"

// Option keys the backend understands (ExecuTorch's XnnpackBackendOptions
// plus a kernel selection key).
const (
	// OptPackedCachePath (string) is the cache file; empty or absent means
	// heap packing that never touches a file (G6).
	OptPackedCachePath = "packed_cache_path"
	// OptWeightCacheEnabled (bool, default true) turns the weights cache
	// off entirely: every weight is packed into memory the backend owns.
	OptWeightCacheEnabled = "weight_cache_enabled"
	// OptSaveWeightCacheOnDisk (bool, default false) asks for an explicit
	// save after finalize, on top of finalize's own auto-save.
	OptSaveWeightCacheOnDisk = "save_weight_cache_on_disk"
	// OptKernel (string) names the packing/compute kernel; empty or absent
	// selects the default kernel.
	OptKernel = "kernel"
)

// BackendConfig is the parsed form of the XNNPACK backend's options.
type BackendConfig struct {
	CachePath          string
	WeightCacheEnabled bool
	SaveOnDisk         bool
	Kernel             string
}

// DefaultBackendConfig is what an absent entry means.
func DefaultBackendConfig() BackendConfig { return BackendConfig{WeightCacheEnabled: true} }

// ParseBackendConfig reads the XNNPACK entry of m (nil or absent gives the
// defaults). A key of the wrong kind is an *options.TypeError; an unknown key
// wraps ErrUnknownOption. ExecuTorch returned InvalidArgument for the former
// (WeightCache.SetInvalidType) and ignored the latter.
func ParseBackendConfig(m *options.Map) (BackendConfig, error) {
	cfg := DefaultBackendConfig()
	if m == nil {
		return cfg, nil
	}
	opts, ok := m.Get(XNNPACKBackendID)
	if !ok {
		return cfg, nil
	}
	for _, o := range opts {
		var want options.Kind
		switch o.Key {
		case OptPackedCachePath:
			want = options.KindString
			cfg.CachePath, ok = o.Value.AsString()
		case OptKernel:
			want = options.KindString
			cfg.Kernel, ok = o.Value.AsString()
		case OptWeightCacheEnabled:
			want = options.KindBool
			cfg.WeightCacheEnabled, ok = o.Value.AsBool()
		case OptSaveWeightCacheOnDisk:
			want = options.KindBool
			cfg.SaveOnDisk, ok = o.Value.AsBool()
		default:
			return BackendConfig{}, fmt.Errorf("%w: %s %q", ErrUnknownOption, XNNPACKBackendID, o.Key)
		}
		if !ok {
			return BackendConfig{}, &options.TypeError{Backend: XNNPACKBackendID, Key: o.Key, Want: want, Got: o.Value.Kind()}
		}
	}
	return cfg, nil
}
