package runtime

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A launch reports its init thread's CPU time beside the wall time: never
// more than the wall time the thread spent (clock reads a microsecond
// apart allowed), and not zero, for a cold launch (which packs) and a warm
// one (which only looks up).
func TestLaunchReportsInitCPU(t *testing.T) {
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "c")
	for _, which := range []string{"cold", "warm"} {
		rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p})
		require.NoError(t, err)
		require.Positive(t, rep.InitCPU, which)
		require.LessOrEqual(t, rep.InitCPU, rep.InitTime+100*time.Microsecond, which)
	}
}
