package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// A cache path Open refuses (a directory, a missing directory) does not
// fail the launch: it packs to heap and reports the *cache.PathError as
// its load error, with the reason a load would have recorded (G8).
func TestLaunchPacksToHeapForAnUnusablePath(t *testing.T) {
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "adir"), 0o755))
	for path, reason := range map[string]cache.HeapReason{
		filepath.Join(dir, "adir"):            cache.HeapNotRegular,
		filepath.Join(dir, "nodir", "c.xpwc"): cache.HeapOpenFailed,
	} {
		rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Verify: true})
		require.NoError(t, err, path)
		require.True(t, rep.Verified)
		require.Equal(t, spec.LoadFailed, rep.Load)
		var pe *cache.PathError
		require.ErrorAs(t, rep.LoadErr, &pe)
		require.Equal(t, path, pe.Path)
		require.Equal(t, rep.HeapBytes, rep.HeapByReason[reason], "%s: %v", path, rep.HeapByReason)
		require.Positive(t, rep.HeapBytes)
	}
}
