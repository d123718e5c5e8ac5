package main

import (
	goruntime "runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The median of two runs is their mean, not the slower one, so a two-run
// figure is not biased upwards.
func TestMedian(t *testing.T) {
	ms := time.Millisecond
	require.Equal(t, 2*ms, median([]time.Duration{3 * ms, 1 * ms, 2 * ms}))
	require.Equal(t, 2*ms, median([]time.Duration{3 * ms, 1 * ms}))
	require.Equal(t, 5*ms, median([]time.Duration{5 * ms}))
	in := []time.Duration{3 * ms, 1 * ms}
	median(in)
	require.Equal(t, []time.Duration{3 * ms, 1 * ms}, in, "median must not reorder its argument")
}

func TestRatio(t *testing.T) {
	require.Equal(t, 8.89, ratio(3529.447, 397.025))
	require.Zero(t, ratio(1, 0))
}

// privateDirty reads smaps_rollup; writing fresh anonymous memory must
// raise it, which is what dirty_bytes_heap_mode relies on.
func TestPrivateDirtyGrowsWithWrittenMemory(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("smaps_rollup is Linux only")
	}
	// Give freed heap back to the kernel first: otherwise the buffer can
	// reuse pages an earlier run (-count>1) already dirtied, and the
	// scavenger may release some while we measure.
	debug.FreeOSMemory()
	before, err := privateDirty()
	require.NoError(t, err)
	buf := make([]byte, 64<<20)
	for i := range buf {
		if i%4096 == 0 {
			buf[i] = 1
		}
	}
	after, err := privateDirty()
	require.NoError(t, err)
	require.Greater(t, after-before, int64(32<<20))
	goruntime.KeepAlive(buf)
}
