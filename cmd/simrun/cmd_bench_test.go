package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/xpwc/xpwc/impl/runtime"
	"github.com/xpwc/xpwc/kernels"
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

// The bandwidth figures break down by layer shape: every layer is counted
// once in its shape, and the whole program's figures are the shapes' sums.
func TestBenchBandwidthByShape(t *testing.T) {
	p, err := runtime.Preset(runtime.PresetSmall, 1)
	require.NoError(t, err)
	k := kernels.NewRegistry().Default()
	var rep benchReport
	require.NoError(t, (&bencher{}).bandwidth(&rep, p, k))
	require.Len(t, rep.PackByShape, p.NumLayers(), "the small preset's layers all differ in shape")
	var layers int
	var packS, copyS float64
	for i, s := range rep.PackByShape {
		l := p.Layer(i)
		require.Equal(t, []any{l.N, l.K, l.Bias, 1}, []any{s.N, s.K, s.Bias, s.Layers})
		require.Positive(t, s.PackGBps)
		require.Positive(t, s.CopyGBps)
		require.Equal(t, ratio(s.PackGBps, s.CopyGBps), s.PackRatio)
		layers += s.Layers
		b := float64(4 * (l.N*l.K + l.N))
		if !l.Bias {
			b = float64(4 * l.N * l.K)
		}
		packS += b / s.PackGBps
		copyS += b / s.CopyGBps
	}
	require.Equal(t, p.NumLayers(), layers)
	// The whole figure is total bytes over total time (up to the rounding
	// of the per-shape figures), not a mean of the shapes' ratios.
	var total float64
	for _, l := range p.Layers() {
		total += float64(4 * l.N * l.K)
		if l.Bias {
			total += float64(4 * l.N)
		}
	}
	require.InEpsilon(t, total/packS, rep.PackGBps, 0.05)
	require.InEpsilon(t, total/copyS, rep.CopyGBps, 0.05)
	require.Equal(t, ratio(rep.PackGBps, rep.CopyGBps), rep.PackRatio)
}

// BenchmarkBandwidth runs simrun bench's packing-against-copy measurement
// alone, on llama-1184 read from a program file as the bench reads it:
//
//	go test ./cmd/simrun -run '^$' -bench Bandwidth -benchtime 1x -count 5
//
// GODEBUG=cpu.avx512f=off takes the kernels' AVX2 path on an AVX-512 CPU.
func BenchmarkBandwidth(b *testing.B) {
	gen, err := runtime.Preset(runtime.PresetLlama1184, 1)
	require.NoError(b, err)
	path := filepath.Join(b.TempDir(), "llama.program")
	require.NoError(b, runtime.WriteProgramFile(path, gen))
	p, err := runtime.ReadProgramFile(path)
	require.NoError(b, err)
	k := kernels.NewRegistry().Default()
	var rep benchReport
	for b.Loop() {
		require.NoError(b, (&bencher{}).bandwidth(&rep, p, k))
	}
	b.ReportMetric(rep.PackRatio, "pack/copy")
	for _, s := range rep.PackByShape {
		b.ReportMetric(s.PackRatio, fmt.Sprintf("%dx%d", s.N, s.K))
	}
}

// The bench lists the default policy's first outputs, one a warm launch,
// and the first-output figures are their median: a reader sees the
// spread one run's ratio carries.
func TestBenchFirstOutputSamples(t *testing.T) {
	var out, errOut bytes.Buffer
	run(&env{stdout: &out, stderr: &errOut}, []string{"bench", "--runs", "3", "--relaunches", "1", "--dir", t.TempDir(), "--json"})
	var rep benchReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), errOut.String())
	require.Len(t, rep.WarmFirstOutputSamplesMS, 3)
	s := slices.Clone(rep.WarmFirstOutputSamplesMS)
	slices.Sort(s)
	require.Equal(t, s[1], rep.WarmFirstOutputMSByPolicy[rep.DefaultPolicy])
	require.Equal(t, ratio(s[1], rep.WarmSteadyRunMS), rep.WarmFirstOutputToSteadyRun)
}

// The limit leaves its file for the next call to remove just before it
// writes, as the cold launches it is compared with do; a previous file of
// any size is replaced, not appended to.
func TestColdLimitReplacesThePreviousFile(t *testing.T) {
	gen, err := runtime.Preset(runtime.PresetSmall, 1)
	require.NoError(t, err)
	dir := t.TempDir()
	prog := filepath.Join(dir, "program")
	require.NoError(t, runtime.WriteProgramFile(prog, gen))
	p, err := runtime.ReadProgramFile(prog)
	require.NoError(t, err)
	k := kernels.NewRegistry().Default()
	var want int64
	for _, l := range p.Layers() {
		want += (int64(k.PackedSize(l.N, l.K)) + 63) &^ 63
	}
	path := filepath.Join(dir, "limit")
	require.NoError(t, os.WriteFile(path, make([]byte, 2*want+4096), 0o600))
	for range 2 {
		_, err := coldLimit(path, p, k)
		require.NoError(t, err)
		fi, err := os.Stat(path)
		require.NoError(t, err, "the limit's file is left for the next call")
		require.LessOrEqual(t, fi.Size(), want)
		require.Greater(t, fi.Size(), want-64)
	}
}
