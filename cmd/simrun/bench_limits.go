package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/runtime"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

// The machine's limits a launch is held to (docs/benchmarks.md): the core of
// a warm load, the part ExecuTorch's loader does too, and the cold launch's
// floor, its bytes read, packed and written with no cache logic.

// cpuModel names the CPU the figures were measured on: the first "model
// name" of /proc/cpuinfo, or the architecture where there is none.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return goruntime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return goruntime.GOARCH
}

// warmLoadCoreCycles is how many warm loads of each format are timed; they
// take about a millisecond each.
const warmLoadCoreCycles = 21

// warmLoadCore times the core of a warm load, for a v2 file and the v3
// file the bench wrote, cycles alternating: Open, InitializeForProgram and
// a LookUp of every layer's key, without prefault and with the default
// verification (no look-up checks data). Finalize and Close are not
// timed. The v2 file is written by a cold launch of its own first.
func (b *bencher) warmLoadCore(rep *benchReport, cfg runtime.LaunchConfig, layers int) error {
	v2 := cfg
	v2.CachePath, v2.Format = b.path+".v2", spec.FormatV2
	defer os.Remove(v2.CachePath)
	defer os.Remove(v2.CachePath + ".lock")
	bc := *b
	bc.path = v2.CachePath
	if _, err := bc.cold(v2, layers); err != nil {
		return err
	}
	be, err := runtime.NewBackend(cfg.Program, cfg.Kernel, nil)
	if err != nil {
		return err
	}
	keys := make([]spec.Key, layers)
	for i := range keys {
		keys[i] = be.Key(i)
	}
	formats := []struct {
		name string
		opts cache.Options
	}{
		{"v2", cache.Options{Path: v2.CachePath, Format: spec.FormatV2, VerifyData: runtime.DefaultVerifyData, DisablePrefault: true}},
		{"v3", cache.Options{Path: b.path, Format: spec.FormatV3, VerifyData: runtime.DefaultVerifyData, DisablePrefault: true}},
	}
	times := make([][]time.Duration, len(formats))
	for i := range warmLoadCoreCycles {
		for j := range formats {
			k := (i + j) % len(formats)
			d, err := warmLoadOnce(formats[k].opts, keys)
			if err != nil {
				return fmt.Errorf("warm load core %s: %w", formats[k].name, err)
			}
			times[k] = append(times[k], d)
		}
	}
	for k, f := range formats {
		rep.WarmLoadCoreMS[f.name] = msOf(median(times[k]))
	}
	b.progress("warm load core (open, initialize, %d look-ups): v2 %.3f ms, v3 %.3f ms", layers, rep.WarmLoadCoreMS["v2"], rep.WarmLoadCoreMS["v3"])
	return nil
}

// warmLoadOnce is one timed warm load of warmLoadCore.
func warmLoadOnce(opts cache.Options, keys []spec.Key) (time.Duration, error) {
	start := time.Now()
	c, err := cache.Open(opts)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.InitializeForProgram("bench-core"); err != nil {
		return 0, err
	}
	for _, k := range keys {
		if _, ok := c.LookUp(k); !ok {
			return 0, fmt.Errorf("%w: look-up of %s missed", errBench, k.Weight)
		}
	}
	d := time.Since(start)
	return d, c.Finalize()
}

// coldLimit is the floor of a cold launch: every layer's weights read from
// the program, packed by the same kernel into one reused buffer and written
// with pwrite, 64-byte aligned as the cache places them, to one new file,
// then fdatasync. No lock, index, checksum or mapping.
//
// It removes the previous call's file just before writing and leaves its
// own, as the bench's cold launches do with theirs, so that both write into
// memory freed just before. On a KVM guest that reports freed memory to
// its host, a limit whose file was removed right after the write took
// 0.74-1.23 s in one bench run (0.49-0.53 s in another), more than the cold
// launches beside it; removed just before the next, 0.51-0.59 s after the
// first call in both runs.
func coldLimit(path string, p *runtime.Program, k *kernels.Kernel) (time.Duration, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	start := time.Now()
	f, err := vfs.OS().OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var maxW, maxN, maxPacked int
	for _, l := range p.Layers() {
		maxW, maxN = max(maxW, l.N*l.K), max(maxN, l.N)
		maxPacked = max(maxPacked, k.PackedSize(l.N, l.K))
	}
	w, bias := make([]float32, maxW), make([]float32, maxN)
	buf := make([]byte, maxPacked) // as bandwidth packs: a large allocation is page-aligned
	var off int64
	for i, l := range p.Layers() {
		ww, bb := w[:l.N*l.K], bias[:l.N]
		p.Weights(i, ww, bb)
		if !l.Bias {
			bb = nil
		}
		packed := buf[:k.PackedSize(l.N, l.K)]
		if err := k.Pack(packed, l.N, l.K, ww, bb); err != nil {
			return 0, err
		}
		if _, err := f.WriteAt(packed, off); err != nil {
			return 0, err
		}
		off += (int64(len(packed)) + 63) &^ 63
	}
	if err := f.SyncData(); err != nil {
		return 0, err
	}
	return time.Since(start), f.Close()
}
