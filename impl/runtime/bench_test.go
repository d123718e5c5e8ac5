package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/kernels"
)

// BenchmarkLaunch measures one launch (open, init, finalize, save, run on
// one row) of a preset: cold removes the cache file before every launch,
// warm launches against a file a previous launch wrote. llama-1184 writes
// about 593 MB per cold launch and runs only with XPWC_BENCH_LARGE=1.
//
//	go test ./impl/runtime -run '^$' -bench Launch
//	XPWC_BENCH_LARGE=1 go test ./impl/runtime -run '^$' -bench Launch/llama -benchtime 3x
func BenchmarkLaunch(b *testing.B) {
	presets := []string{PresetSmall}
	if os.Getenv("XPWC_BENCH_LARGE") == "1" {
		presets = append(presets, PresetLlama1184)
	}
	k := kernels.NewRegistry().Default()
	for _, name := range presets {
		p, err := Preset(name, 1)
		require.NoError(b, err)
		var packed int64
		for _, l := range p.Layers() {
			packed += int64(k.PackedSize(l.N, l.K))
		}
		for _, mode := range []string{"heap", "cold", "warm"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				path := ""
				if mode != "heap" {
					path = filepath.Join(b.TempDir(), "bench.cache")
				}
				cfg := LaunchConfig{CachePath: path, Program: p, Kernel: k}
				if mode == "warm" {
					_, err := Launch(context.Background(), cfg)
					require.NoError(b, err)
				}
				b.SetBytes(packed)
				b.ReportAllocs()
				var initTime, runTime time.Duration
				for b.Loop() {
					if mode == "cold" {
						b.StopTimer()
						for _, f := range []string{path, path + ".lock"} {
							if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
								b.Fatal(err)
							}
						}
						b.StartTimer()
					}
					rep, err := Launch(context.Background(), cfg)
					if err != nil {
						b.Fatal(err)
					}
					if mode == "warm" && rep.Packed != 0 {
						b.Fatalf("warm launch packed %d layers", rep.Packed)
					}
					initTime += rep.InitTime
					runTime += rep.RunTime
				}
				// Init covers look-ups, packing, finalize and save; run is
				// inference on one row, reading every packed byte once.
				b.ReportMetric(float64(initTime.Microseconds())/1e3/float64(b.N), "init-ms/op")
				b.ReportMetric(float64(runTime.Microseconds())/1e3/float64(b.N), "run-ms/op")
			})
		}
	}
}

// BenchmarkAllocateAhead: how far ahead a new cache file is allocated
// (cache.Options.AllocateAhead) trades the cold launch's stores against the
// next warm launch's first pass over the mapping (docs/benchmarks.md, "How
// far ahead a new file is allocated"). Each round launches cold with each
// setting in turn (the order rotating), each followed by a warm launch of
// the default policy on its file; the medians and the ratios to "region"
// (the file grown one region at a time) are the metrics. 16 layers of
// 1024x1024, 64 MiB packed; XPWC_BENCH_LARGE=1 runs llama-1184 (593 MB).
//
//	go test ./impl/runtime -run '^$' -bench AllocateAhead -benchtime 5x -count 3
func BenchmarkAllocateAhead(b *testing.B) {
	p := benchProgram(b)
	if os.Getenv("XPWC_BENCH_LARGE") == "1" {
		var err error
		p, err = Preset(PresetLlama1184, 1)
		require.NoError(b, err)
	}
	path := filepath.Join(b.TempDir(), "c.xpwc")
	settings := []struct {
		name  string
		ahead int64
	}{{"16mib", 0}, {"1024mib", 1 << 30}, {"region", -1}}
	cold, first := make([][]time.Duration, len(settings)), make([][]time.Duration, len(settings))
	round := 0
	for b.Loop() {
		for j := range settings {
			i := (round + j) % len(settings)
			for _, f := range []string{path, path + ".lock"} {
				if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
					b.Fatal(err)
				}
			}
			rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, VerifyData: DefaultVerifyData.ID(), AllocateAhead: settings[i].ahead})
			require.NoError(b, err)
			require.Equal(b, p.NumLayers(), rep.Packed)
			cold[i] = append(cold[i], rep.InitTime)
			rep, err = Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, VerifyData: DefaultVerifyData.ID(), DisableVerifyAhead: true})
			require.NoError(b, err)
			require.Zero(b, rep.Packed)
			first[i] = append(first[i], rep.InitTime+rep.RunTime)
		}
		round++
	}
	last := len(settings) - 1
	coldRegion, firstRegion := medianDuration(cold[last]), medianDuration(first[last])
	for i, s := range settings {
		c, f := medianDuration(cold[i]), medianDuration(first[i])
		b.ReportMetric(float64(c)/1e6, "cold-ms-"+s.name)
		b.ReportMetric(float64(f)/1e6, "first-ms-"+s.name)
		if i != last {
			b.ReportMetric(float64(c)/float64(coldRegion), "cold-"+s.name+"/region")
			b.ReportMetric(float64(f)/float64(firstRegion), "first-"+s.name+"/region")
		}
	}
}

// benchProgram is the 64 MiB program of the first-output benchmarks: 16
// chained layers of 1024x1024.
func benchProgram(b *testing.B) *Program {
	layers := make([]Layer, 16)
	for i := range layers {
		layers[i] = Layer{Name: "l" + strconv.Itoa(i), N: 1024, K: 1024, Bias: true}
		if i > 0 {
			layers[i].Input = layers[i-1].Name
		}
	}
	p, err := NewSynthetic("bench", 1, layers)
	require.NoError(b, err)
	return p
}

// BenchmarkWarmFirstOutput: a warm launch's first output (open, load,
// look-ups, finalize, save, first inference on one row) under each data
// verification policy, beside its floor in the same run: one read pass over
// a fresh read-only mapping of the same cache file (the first touch a warm
// launch pays to read its weights once). "/prefault" populates the mapping
// on a second goroutine while the inference runs (on unless cache.Options.DisablePrefault);
// "/verify-ahead" checks the entries on it instead, ahead of the compute
// (on unless cache.Options.DisableVerifyAhead).
// 16 layers of 1024×1024, about 64 MiB packed. Compare the sub-benchmarks'
// ns/op:
//
//	go test ./impl/runtime -run '^$' -bench WarmFirstOutput -count 6
func BenchmarkWarmFirstOutput(b *testing.B) {
	p := benchProgram(b)
	path := filepath.Join(b.TempDir(), "c.xpwc")
	_, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p})
	require.NoError(b, err)

	b.Run("sweep", func(b *testing.B) {
		var sink byte
		for b.Loop() {
			f, err := vfs.OS().OpenFile(path, os.O_RDONLY, 0)
			require.NoError(b, err)
			st, err := f.Stat()
			require.NoError(b, err)
			m, err := f.Map(0, int(st.Size()), vfs.ProtRead)
			require.NoError(b, err)
			mem := m.Bytes()
			for i := 0; i < len(mem); i += 64 {
				sink += mem[i]
			}
			require.NoError(b, m.Close())
			require.NoError(b, f.Close())
		}
		_ = sink
	})
	first := func(name string, cfg LaunchConfig) {
		b.Run("first-output/"+name, func(b *testing.B) {
			for b.Loop() {
				rep, err := Launch(context.Background(), cfg)
				require.NoError(b, err)
				require.Zero(b, rep.Packed)
			}
		})
	}
	// The prefault variants alternated in one loop, the order rotating
	// each round, so that all see the same load: under on-compute no walk
	// ("plain"), populating ("prefault") and verifying ahead ("ahead");
	// under off plain and prefault (verifying ahead is populating there).
	// Medians of each and their ratios as metrics.
	type variant struct {
		name            string
		prefault, ahead bool
	}
	for _, pol := range []cache.VerifyPolicy{cache.VerifyOnCompute, cache.VerifyOff} {
		vs := []variant{{"plain", false, false}, {"prefault", true, false}}
		if pol == cache.VerifyOnCompute {
			vs = append(vs, variant{"ahead", true, true})
		}
		b.Run("prefault-alternated/"+pol.String(), func(b *testing.B) {
			got := make([][]time.Duration, len(vs))
			round := 0
			for b.Loop() {
				for j := range vs {
					k := (round + j) % len(vs)
					rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, VerifyData: pol.ID(),
						DisablePrefault: !vs[k].prefault, DisableVerifyAhead: !vs[k].ahead})
					require.NoError(b, err)
					require.Zero(b, rep.Packed)
					got[k] = append(got[k], rep.InitTime+rep.RunTime)
				}
				round++
			}
			m := make([]time.Duration, len(vs))
			for k, v := range vs {
				m[k] = medianDuration(got[k])
				b.ReportMetric(float64(m[k])/1e6, "ms-"+v.name)
			}
			b.ReportMetric(float64(m[1])/float64(m[0]), "prefault/plain")
			if len(vs) > 2 {
				b.ReportMetric(float64(m[2])/float64(m[0]), "ahead/plain")
				b.ReportMetric(float64(m[2])/float64(m[1]), "ahead/prefault")
			}
		})
	}
	for _, pol := range []cache.VerifyPolicy{cache.VerifyOnCompute, cache.VerifyOnFirstUse, cache.VerifyOnLoad, cache.VerifyOff} {
		first(pol.String(), LaunchConfig{CachePath: path, Program: p, VerifyData: pol.ID(), DisablePrefault: true})
		if pol == cache.VerifyOnCompute || pol == cache.VerifyOff {
			first(pol.String()+"/prefault", LaunchConfig{CachePath: path, Program: p, VerifyData: pol.ID(), DisableVerifyAhead: true})
		}
		if pol == cache.VerifyOnCompute {
			first(pol.String()+"/verify-ahead", LaunchConfig{CachePath: path, Program: p, VerifyData: pol.ID()})
		}
	}
}
