package runtime

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// Threads of one process launching programs through one Manager share one
// cache per path (G6). Whatever the interleaving, every launch's output
// equals heap packing's (G1, G8), and a later launch from a fresh Manager
// finds a consistent file.
func TestConcurrentLaunchesShareOneCache(t *testing.T) {
	small, err := Preset(PresetSmall, 8)
	require.NoError(t, err)
	other, err := NewSynthetic("other", 8, smallLayers())
	require.NoError(t, err)
	path := tempPath(t, "shared.cache")
	mgr := cache.NewManager(nil)

	const workers = 6
	var wg sync.WaitGroup
	reps := make([]LaunchReport, workers)
	errs := make([]error, workers)
	for i := range workers {
		wg.Go(func() {
			p := small
			if i%2 == 1 {
				p = other
			}
			reps[i], errs[i] = Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Manager: mgr, Verify: true})
		})
	}
	wg.Wait()
	for i := range workers {
		require.NoError(t, errs[i], "worker %d", i)
		assert.True(t, reps[i].Verified, "worker %d: %+v", i, reps[i])
	}

	for _, p := range []*Program{small, other} {
		rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Verify: true})
		require.NoError(t, err)
		assert.True(t, rep.Verified)
		assert.Equal(t, spec.LoadOK, rep.Load, "%v", rep.LoadErr)
	}
}
