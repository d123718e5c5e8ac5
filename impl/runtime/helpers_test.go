package runtime

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/runtime/options"
	"github.com/xpwc/xpwc/kernels"
)

// testModule returns a module over the small preset with its own Manager,
// as one process would have.
func testModule(t *testing.T) *Module {
	t.Helper()
	return NewModule(ModuleConfig{
		Program:   func() (*Program, error) { return Preset(PresetSmall, 3) },
		Kernel:    RegistryKernels(kernels.NewRegistry()),
		OpenCache: ManagerCaches(cache.NewManager(nil), cache.Options{}),
	})
}

func xnnOpts(t *testing.T, opts ...options.Option) *options.Map {
	t.Helper()
	var m options.Map
	require.NoError(t, m.Set(XNNPACKBackendID, opts...))
	return &m
}

func pathOpt(p string) options.Option {
	return options.Option{Key: OptPackedCachePath, Value: options.String(p)}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func requireBitsEqual(t *testing.T, want, got []float32, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, len(want), len(got), msgAndArgs...)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			require.Failf(t, "outputs differ", "element %d: %v vs %v %v", i, want[i], got[i], msgAndArgs)
		}
	}
}

func tempPath(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}
