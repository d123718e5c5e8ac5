package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/runtime"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

// benchReport is what `simrun bench --json` prints. Times are milliseconds,
// sizes bytes, bandwidths GB/s (1e9 bytes per second).
//
// ColdMS and WarmMS are the init time of a launch: open, load, look-ups,
// packing, finalize (msync) and save — what a warm launch saves. Inference
// on one row is reported apart (ColdRunMS, WarmRunMS): it reads every packed
// byte once, whatever the cache did. WarmMS uses the default data
// verification policy; WarmMSByPolicy has every policy (G1).
type benchReport struct {
	Preset string `json:"preset"`
	// CPU is the processor's model name and SIMD the compute path the
	// default kernel's dispatch picked on it ("avx512f", "avx2-fma",
	// "go"): every figure below depends on both.
	CPU           string `json:"cpu"`
	SIMD          string `json:"simd"`
	Kernel        string `json:"kernel"`
	Layers        int    `json:"layers"`
	PackedBytes   int64  `json:"packed_bytes"`
	Runs          int    `json:"runs"`
	DefaultPolicy string `json:"default_policy"`

	ColdMS              float64            `json:"cold_ms"`
	WarmMS              float64            `json:"warm_ms"`
	WarmSpeedup         float64            `json:"warm_speedup"`
	WarmMSByPolicy      map[string]float64 `json:"warm_ms_by_policy"`
	WarmSpeedupByPolicy map[string]float64 `json:"warm_speedup_by_policy"`
	// WarmFirstOutputMSByPolicy is init plus inference: checking data
	// checksums faults the pages in, which inference would otherwise do.
	WarmFirstOutputMSByPolicy map[string]float64 `json:"warm_first_output_ms_by_policy"`
	// WarmFirstOutputSamplesMS are the default policy's first outputs,
	// one a warm launch (fresh open and mapping), in run order: the
	// figures above are their median, and their spread is the noise a
	// ratio of one bench run carries.
	WarmFirstOutputSamplesMS []float64 `json:"warm_first_output_samples_ms"`
	ColdRunMS                float64   `json:"cold_run_ms"`
	WarmRunMS                float64   `json:"warm_run_ms"`
	// WarmSteadyRunMS is inference once the weights are resident and
	// checked (the median of later runs of a warm launch): the floor of a
	// first output. The two ratios are the goals, default policy
	// over off and over a steady inference.
	WarmSteadyRunMS            float64 `json:"warm_steady_run_ms"`
	WarmFirstOutputToOff       float64 `json:"warm_first_output_to_off"`
	WarmFirstOutputToSteadyRun float64 `json:"warm_first_output_to_steady_run"`
	// Prefault and VerifyAhead are what the launches above did with the
	// cache's mapping on a second goroutine (on unless cache.Options.DisablePrefault or
	// DisableVerifyAhead). The maps by prefault variant ("none",
	// "populate": populate the mapping from its end, "verify-ahead":
	// check the entries ahead of the compute, which faults them in) come from
	// launches alternated in one loop, the order rotating each round, so
	// all are measured under the same load: the first output under the
	// default policy and under off (where verify-ahead is populate), each
	// variant's over a steady inference and over off with the same walk
	// (verify-ahead's over off's populate), and how many entries the walk
	// checked before the compute reached them (median).
	Prefault                          bool               `json:"prefault"`
	VerifyAhead                       bool               `json:"verify_ahead"`
	WarmFirstOutputMSByPrefault       map[string]float64 `json:"warm_first_output_ms_by_prefault"`
	WarmFirstOutputOffMSByPrefault    map[string]float64 `json:"warm_first_output_off_ms_by_prefault"`
	WarmFirstOutputToSteadyByPrefault map[string]float64 `json:"warm_first_output_to_steady_by_prefault"`
	WarmFirstOutputToOffByPrefault    map[string]float64 `json:"warm_first_output_to_off_by_prefault"`
	WarmChecksAheadByPrefault         map[string]float64 `json:"warm_checks_ahead_by_prefault"`
	// How far ahead a new cache file is allocated (cache.Options.AllocateAhead)
	// decides the size of the page cache's folios, which the cold launch's
	// stores and the next warm launch's first pass pay for in opposite
	// directions. AllocateAhead is the default the launches above used;
	// the two maps have, by setting ("16mib", "1024mib", "region" for
	// none), the cold
	// init and the first output of a warm launch (default policy) right
	// after it, settings alternated in one loop.
	AllocateAhead                    int64              `json:"allocate_ahead"`
	ColdMSByAllocateAhead            map[string]float64 `json:"cold_ms_by_allocate_ahead"`
	WarmFirstOutputMSByAllocateAhead map[string]float64 `json:"warm_first_output_ms_by_allocate_ahead"`
	// How the cold launch writes packed bytes into the file
	// (cache.Options.MappedWrites): "mapped", stores through a read-write
	// mapping of each region, or "staged", heap buffers written with
	// pwrite at insert. The buffered writes leave the page cache in larger
	// folios, which the next warm launch's first pass faults in. By mode,
	// alternated in one loop: cold init, the first output of a warm
	// launch (default policy) right after it, and that over the same warm
	// launches' steady inference. StagedWrites is what the other launches did
	// (staged, the default).
	StagedWrites                    bool               `json:"staged_writes"`
	ColdMSByWrites                  map[string]float64 `json:"cold_ms_by_writes"`
	WarmFirstOutputMSByWrites       map[string]float64 `json:"warm_first_output_ms_by_writes"`
	WarmFirstOutputToSteadyByWrites map[string]float64 `json:"warm_first_output_to_steady_by_writes"`

	// The program's unpacked weights come from a program file written once
	// before any timing and read before the launches, as a runtime loads a
	// model file's constant segment: ProgramFileBytes, ProgramLoadMS (read,
	// parse, source digests). Cold init then splits (medians) into reading
	// those weights, packing them into the reserved file pages, the commit
	// (Finalize: data and index synced, commit point), and the rest
	// (look-ups, reservations, open and load).
	ProgramFileBytes int64   `json:"program_file_bytes"`
	ProgramLoadMS    float64 `json:"program_load_ms"`
	ColdReadMS       float64 `json:"cold_read_ms"`
	ColdPackMS       float64 `json:"cold_pack_ms"`
	ColdCommitMS     float64 `json:"cold_commit_ms"`
	ColdOtherMS      float64 `json:"cold_other_ms"`
	// ColdLimitMS is the cold launch's floor, measured in the same run,
	// alternating with the cold launches: the same bytes read, packed by
	// the same kernel and written to one new file (pwrite, fdatasync) with
	// no cache logic. ColdToLimit is ColdMS / ColdLimitMS.
	ColdLimitMS float64 `json:"cold_limit_ms"`
	ColdToLimit float64 `json:"cold_to_limit"`
	// WarmLoadCoreMS is the core of a warm load by file format ("v2",
	// "v3"), what ExecuTorch's loader does too: Open, InitializeForProgram
	// and a LookUp of every layer, on the file in the page cache, without
	// prefault; the median of cycles alternating the formats.
	WarmLoadCoreMS map[string]float64 `json:"warm_load_core_ms"`

	LookupNS      float64 `json:"lookup_ns"`
	LookupsPerSec float64 `json:"lookups_per_sec"`

	// Dirty bytes after finalize (G5): file mode from /proc/self/smaps of
	// the cache file's mappings (Private_Dirty + Shared_Dirty) after a cold
	// and after a warm launch; heap mode is the growth of the process's
	// Private_Dirty (smaps_rollup) while a heap-packed program is live.
	// HeapMS is the init time of the same program packed on the heap with
	// no cache file: packing alone, the baseline a cache must beat.
	HeapMS                   float64 `json:"heap_ms"`
	MemoryMeasured           bool    `json:"memory_measured"`
	DirtyBytesFileMode       int64   `json:"dirty_bytes_file_mode"`
	DirtyBytesFileModeWarm   int64   `json:"dirty_bytes_file_mode_warm"`
	DirtyBytesHeapMode       int64   `json:"dirty_bytes_heap_mode"`
	MappedRSSBytesFileMode   int64   `json:"mapped_rss_bytes_file_mode"`
	FileSize                 int64   `json:"file_size"`
	Relaunches               int     `json:"relaunches"`
	GrowthBytes100Relaunches int64   `json:"growth_bytes_100_relaunches"`
	MtimeChanged             bool    `json:"mtime_changed"`

	// A kernel upgrade: a launch with another kernel re-packs everything
	// (repacks by reason), the launch after it hits everything (G3).
	UpgradeKernel           string            `json:"upgrade_kernel"`
	UpgradeRepacks          map[string]uint64 `json:"upgrade_repacks"`
	UpgradeNextMisses       uint64            `json:"upgrade_next_misses"`
	FileSizeAfterUpgrade    int64             `json:"file_size_after_upgrade"`
	GarbageAfterUpgrade     int64             `json:"garbage_bytes_after_upgrade"`
	GrowthBytesAfterUpgrade int64             `json:"growth_bytes_after_upgrade"`

	// Packing and plain copy of the same source bytes, layer by layer,
	// alternated in one loop so both see the same machine state
	// (bencher.bandwidth); PackByShape is the same per layer shape.
	// CRCGBps is CRC32C over the packed bytes in the same loop, a buffer hot
	// in the caches: not the path a warm launch runs (ChecksumGBps is).
	PackGBps    float64     `json:"pack_gbps"`
	CopyGBps    float64     `json:"copy_gbps"`
	CRCGBps     float64     `json:"crc_gbps"`
	PackRatio   float64     `json:"pack_to_copy_ratio"`
	PackByShape []packShape `json:"pack_by_shape"`

	// Over the cache file as a warm launch sees it, mapped read-only:
	// FirstTouchMS is the first read pass over a fresh mapping (its page
	// faults included), SweepMS a second pass (the floor of any check of
	// the bytes), ChecksumGBps the data checksum (spec.DataChecksum, XXH3)
	// over the same mapping, what data verification (G1) runs;
	// ChecksumToSweep is checksum GB/s over sweep GB/s. CRC32CGBps is
	// CRC32C over the same mapping, the data checksum v3 used before.
	MappedBytes     int64   `json:"mapped_bytes"`
	FirstTouchMS    float64 `json:"first_touch_ms"`
	SweepMS         float64 `json:"sweep_ms"`
	SweepGBps       float64 `json:"sweep_gbps"`
	ChecksumGBps    float64 `json:"checksum_gbps"`
	ChecksumToSweep float64 `json:"checksum_to_sweep"`
	CRC32CGBps      float64 `json:"crc32c_mapped_gbps"`
	CRC32CToSweep   float64 `json:"crc32c_to_sweep"`
}

// cmdBench measures cold and warm launches of a preset in a temporary
// directory, with progress on stderr when it is a terminal (or --progress).
// Exit 0 when every step behaved (warm
// launches hit everything); 1 when a step did not, or failed; 2 usage.
func cmdBench(e *env, args []string) int {
	fs := newFlagSet(e, "bench", "simrun bench [--preset small|llama-1184] [--runs N] [--relaunches N] [--dir DIR] [--json] [--progress]")
	preset := fs.String("preset", runtime.PresetSmall, "preset: "+strings.Join(runtime.Presets(), " or "))
	runs := fs.Int("runs", 0, "launches per measurement, median reported (0: 5 for small, 3 for llama-1184)")
	relaunches := fs.Int("relaunches", 100, "warm relaunches for the growth measurement (G4)")
	dir := fs.String("dir", "", "directory for the cache file (default: a new temporary directory, removed after)")
	asJSON := fs.Bool("json", false, "print a JSON report instead of text")
	progress := fs.Bool("progress", false, "print progress to stderr even when it is not a terminal")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if code := extraArgs(e, fs, "bench"); code >= 0 {
		return code
	}
	if code := checkRanges(e, "bench", atLeast("runs", int64(*runs), 0), atLeast("relaunches", int64(*relaunches), 0)); code >= 0 {
		return code
	}
	if !slices.Contains(runtime.Presets(), *preset) {
		fmt.Fprintf(e.stderr, "simrun bench: unknown preset %q (have %s)\n", *preset, strings.Join(runtime.Presets(), ", "))
		return exitUsage
	}
	if *runs == 0 {
		*runs = 5
		if *preset == runtime.PresetLlama1184 {
			*runs = 3
		}
	}
	work := *dir
	if work == "" {
		d, err := os.MkdirTemp("", "simrun-bench-")
		if err != nil {
			fmt.Fprintf(e.stderr, "simrun bench: %v\n", err)
			return exitProblem
		}
		defer os.RemoveAll(d)
		work = d
	}
	b := &bencher{e: e, runs: *runs, path: filepath.Join(work, "bench.cache"), verbose: *progress || e.stderrIsTerminal()}
	rep, err := b.run(*preset, *relaunches)
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun bench: %v\n", err)
		return exitProblem
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(e.stderr, "simrun bench: %v\n", err)
			return exitProblem
		}
	} else {
		printBench(e.stdout, rep)
	}
	return exitOK
}

// errBench marks a launch that did not do what the measurement assumes.
var errBench = errors.New("unexpected launch outcome")

type bencher struct {
	e    *env
	runs int
	path string
	// verbose: progress lines go to stderr. A minute-long run shows a person
	// at a terminal where it is; a pipe or a log gets only the report.
	verbose bool
}

func (b *bencher) progress(format string, args ...any) {
	if b.verbose {
		fmt.Fprintf(b.e.stderr, "bench: "+format+"\n", args...)
	}
}

func (b *bencher) run(preset string, relaunches int) (*benchReport, error) {
	gen, err := runtime.Preset(preset, 1)
	if err != nil {
		return nil, err
	}
	// The weights come from a file, not from the generator inside init.
	progPath := b.path + ".program"
	if err := runtime.WriteProgramFile(progPath, gen); err != nil {
		return nil, err
	}
	defer os.Remove(progPath)
	loadStart := time.Now()
	p, err := runtime.ReadProgramFile(progPath)
	if err != nil {
		return nil, err
	}
	programLoad := time.Since(loadStart)
	progInfo, err := os.Stat(progPath)
	if err != nil {
		return nil, err
	}
	reg := kernels.NewRegistry()
	k := reg.Default()
	up, ok := reg.Lookup("f32-goi-nr16-kr4")
	if !ok {
		return nil, fmt.Errorf("%w: no upgrade kernel registered", errBench)
	}
	var defaults runtime.LaunchConfig
	rep := &benchReport{
		Preset: preset, CPU: cpuModel(), SIMD: k.ComputePath(), WarmLoadCoreMS: map[string]float64{},
		Kernel: k.Name(), Layers: p.NumLayers(), Runs: b.runs,
		DefaultPolicy:  runtime.DefaultVerifyData.String(),
		WarmMSByPolicy: map[string]float64{}, WarmSpeedupByPolicy: map[string]float64{},
		WarmFirstOutputMSByPolicy: map[string]float64{}, WarmFirstOutputMSByPrefault: map[string]float64{},
		WarmFirstOutputOffMSByPrefault: map[string]float64{}, WarmFirstOutputToSteadyByPrefault: map[string]float64{},
		WarmFirstOutputToOffByPrefault: map[string]float64{}, WarmChecksAheadByPrefault: map[string]float64{},
		Prefault: !defaults.DisablePrefault, VerifyAhead: !defaults.DisableVerifyAhead, AllocateAhead: cache.DefaultAllocateAhead,
		ColdMSByAllocateAhead: map[string]float64{}, WarmFirstOutputMSByAllocateAhead: map[string]float64{},
		ColdMSByWrites: map[string]float64{}, WarmFirstOutputMSByWrites: map[string]float64{},
		WarmFirstOutputToSteadyByWrites: map[string]float64{},
		UpgradeKernel:                   up.Name(), UpgradeRepacks: map[string]uint64{}, Relaunches: relaunches,
	}
	for _, l := range p.Layers() {
		rep.PackedBytes += int64(k.PackedSize(l.N, l.K))
	}
	rep.ProgramFileBytes, rep.ProgramLoadMS = progInfo.Size(), msOf(programLoad)
	cfg := benchLaunchConfig(b.path, p, k)
	rep.StagedWrites = !cfg.MappedWrites

	// How far ahead a new file is allocated: the default, a GiB (large
	// folios) and none. Before the cold launches below, so the file every
	// later figure reads was written with the default.
	aheads := []int64{cache.DefaultAllocateAhead, 1 << 30, -1}
	aheadNames := make([]string, len(aheads))
	for k, a := range aheads {
		aheadNames[k] = aheadName(a)
	}
	byAhead, err := b.coldThenWarm("allocate ahead", cfg, p.NumLayers(), aheadNames,
		func(c *runtime.LaunchConfig, k int) { c.AllocateAhead = aheads[k] }, 0)
	if err != nil {
		return nil, err
	}
	for k, n := range aheadNames {
		rep.ColdMSByAllocateAhead[n] = byAhead[k].cold
		rep.WarmFirstOutputMSByAllocateAhead[n] = byAhead[k].first
	}

	// How the cold launch writes: through mapped regions or staged in heap
	// buffers and written at insert (cache.Options.MappedWrites); the warm
	// launch after each reads the page cache it left.
	writeModes := []string{"mapped", "staged"}
	byWrites, err := b.coldThenWarm("writes", cfg, p.NumLayers(), writeModes,
		func(c *runtime.LaunchConfig, k int) { c.MappedWrites = writeModes[k] == "mapped" }, 3)
	if err != nil {
		return nil, err
	}
	for k, n := range writeModes {
		rep.ColdMSByWrites[n] = byWrites[k].cold
		rep.WarmFirstOutputMSByWrites[n] = byWrites[k].first
		rep.WarmFirstOutputToSteadyByWrites[n] = ratio(byWrites[k].first, byWrites[k].steady)
	}

	// Cold: no file before each launch.
	var coldInit, coldRun, coldRead, coldPack, coldCommit, coldOther, coldLim []time.Duration
	defer os.Remove(b.path + ".limit")
	for i := range b.runs {
		r, err := b.cold(cfg, p.NumLayers())
		if err != nil {
			return nil, err
		}
		lim, err := coldLimit(b.path+".limit", p, k)
		if err != nil {
			return nil, err
		}
		coldLim = append(coldLim, lim)
		coldInit, coldRun = append(coldInit, r.InitTime), append(coldRun, r.RunTime)
		coldRead, coldPack, coldCommit = append(coldRead, r.SourceTime), append(coldPack, r.PackTime), append(coldCommit, r.FinalizeTime)
		coldOther = append(coldOther, r.InitTime-r.SourceTime-r.PackTime-r.FinalizeTime)
		rep.MemoryMeasured, rep.DirtyBytesFileMode, rep.MappedRSSBytesFileMode = r.MemoryMeasured, r.MappedDirty, r.MappedRSS
		b.progress("cold %d/%d: init %v, run %v, limit %v", i+1, b.runs, r.InitTime.Round(time.Microsecond), r.RunTime.Round(time.Microsecond), lim.Round(time.Microsecond))
	}
	rep.ColdLimitMS = msOf(median(coldLim))
	rep.ColdMS, rep.ColdRunMS = msOf(median(coldInit)), msOf(median(coldRun))
	rep.ColdReadMS, rep.ColdPackMS = msOf(median(coldRead)), msOf(median(coldPack))
	rep.ColdCommitMS, rep.ColdOtherMS = msOf(median(coldCommit)), msOf(median(coldOther))
	rep.ColdToLimit = ratio(rep.ColdMS, rep.ColdLimitMS)
	if err := b.warmLoadCore(rep, cfg, p.NumLayers()); err != nil {
		return nil, err
	}

	// Warm, once per verification policy, against the last cold file.
	for _, pol := range verifyPolicies {
		c := cfg
		c.VerifyData = pol.ID()
		if pol == runtime.DefaultVerifyData {
			c.SteadyRuns = 3
		}
		var inits, runsT, firsts, steady []time.Duration
		for i := range b.runs {
			r, err := b.warm(c, p.NumLayers())
			if err != nil {
				return nil, err
			}
			inits, runsT = append(inits, r.InitTime), append(runsT, r.RunTime)
			steady = append(steady, r.SteadyRunTime)
			firsts = append(firsts, r.InitTime+r.RunTime)
			if pol == runtime.DefaultVerifyData {
				rep.DirtyBytesFileModeWarm = r.MappedDirty
				rep.WarmFirstOutputSamplesMS = append(rep.WarmFirstOutputSamplesMS, msOf(r.InitTime+r.RunTime))
			}
			b.progress("warm %s %d/%d: init %v, run %v", pol, i+1, b.runs, r.InitTime.Round(time.Microsecond), r.RunTime.Round(time.Microsecond))
		}
		rep.WarmMSByPolicy[pol.String()] = msOf(median(inits))
		rep.WarmSpeedupByPolicy[pol.String()] = ratio(rep.ColdMS, msOf(median(inits)))
		rep.WarmFirstOutputMSByPolicy[pol.String()] = msOf(median(firsts))
		if pol == runtime.DefaultVerifyData {
			rep.WarmMS, rep.WarmRunMS = msOf(median(inits)), msOf(median(runsT))
			rep.WarmSteadyRunMS = msOf(median(steady))
		}
	}
	rep.WarmSpeedup = ratio(rep.ColdMS, rep.WarmMS)
	first := rep.WarmFirstOutputMSByPolicy[rep.DefaultPolicy]
	rep.WarmFirstOutputToOff = ratio(first, rep.WarmFirstOutputMSByPolicy[cache.VerifyOff.String()])
	rep.WarmFirstOutputToSteadyRun = ratio(first, rep.WarmSteadyRunMS)
	if err := b.prefaultVariants(rep, cfg, p.NumLayers()); err != nil {
		return nil, err
	}

	// G4: relaunches with nothing new write nothing.
	st0, err := os.Stat(b.path)
	if err != nil {
		return nil, err
	}
	for i := range relaunches {
		if _, err := b.warm(cfg, p.NumLayers()); err != nil {
			return nil, err
		}
		if (i+1)%25 == 0 {
			b.progress("relaunch %d/%d", i+1, relaunches)
		}
	}
	st1, err := os.Stat(b.path)
	if err != nil {
		return nil, err
	}
	rep.FileSize = st0.Size()
	rep.GrowthBytes100Relaunches = st1.Size() - st0.Size()
	rep.MtimeChanged = !st1.ModTime().Equal(st0.ModTime())

	if err := b.bandwidth(rep, p, k); err != nil {
		return nil, err
	}
	if err := b.mappedFile(rep); err != nil {
		return nil, err
	}
	if err := b.lookups(rep, p, k); err != nil {
		return nil, err
	}
	if err := b.upgrade(rep, cfg, up); err != nil {
		return nil, err
	}
	dirty, heapInit, err := heapLaunch(p, k, rep.MemoryMeasured)
	if err != nil {
		return nil, err
	}
	rep.DirtyBytesHeapMode, rep.HeapMS = dirty, msOf(heapInit)
	b.progress("heap mode: init %v, %d dirty bytes", heapInit.Round(time.Microsecond), dirty)
	return rep, nil
}

// prefaultVariant is one way a warm launch treats the cache's mapping
// while its first inference runs.
type prefaultVariant struct {
	name                  string
	policy                cache.VerifyPolicy
	prefault, verifyAhead bool
}

// benchLaunchConfig is the launch the bench measures: the library's
// defaults (the zero LaunchConfig's cache settings), which the figures
// are of (TestSimrunDefaultsAreTheLibrarys).
func benchLaunchConfig(path string, p *runtime.Program, k runtime.Kernel) runtime.LaunchConfig {
	return runtime.LaunchConfig{CachePath: path, Program: p, Kernel: k, MeasureMemory: true}
}

// The variants the bench alternates: under the default policy none,
// populating the mapping and verifying ahead; under off (the floor the
// default policy is held to) none and populating, which is what
// verify-ahead does there.
var prefaultVariants = []prefaultVariant{
	{"none", runtime.DefaultVerifyData, false, false},
	{"populate", runtime.DefaultVerifyData, true, false},
	{"verify-ahead", runtime.DefaultVerifyData, true, true},
	{"none", cache.VerifyOff, false, false},
	{"populate", cache.VerifyOff, true, false},
}

// prefaultVariants measures the first output of a warm launch by prefault
// variant, the launches alternated with the order rotating each round.
func (b *bencher) prefaultVariants(rep *benchReport, cfg runtime.LaunchConfig, layers int) error {
	firsts := make([][]time.Duration, len(prefaultVariants))
	ahead := make([][]uint64, len(prefaultVariants))
	for i := range b.runs {
		for j := range prefaultVariants {
			k := (i + j) % len(prefaultVariants)
			v := prefaultVariants[k]
			c := cfg
			c.VerifyData, c.DisablePrefault, c.DisableVerifyAhead, c.SteadyRuns = v.policy.ID(), !v.prefault, !v.verifyAhead, 0
			r, err := b.warm(c, layers)
			if err != nil {
				return err
			}
			firsts[k] = append(firsts[k], r.InitTime+r.RunTime)
			ahead[k] = append(ahead[k], r.DataChecksAhead)
			b.progress("warm %s prefault %s %d/%d: first output %v, %d entries checked ahead", v.policy, v.name, i+1, b.runs,
				(r.InitTime + r.RunTime).Round(time.Microsecond), r.DataChecksAhead)
		}
	}
	for k, v := range prefaultVariants {
		ms := msOf(median(firsts[k]))
		if v.policy == cache.VerifyOff {
			rep.WarmFirstOutputOffMSByPrefault[v.name] = ms
			continue
		}
		rep.WarmFirstOutputMSByPrefault[v.name] = ms
		rep.WarmChecksAheadByPrefault[v.name] = float64(median(ahead[k]))
	}
	for name, ms := range rep.WarmFirstOutputMSByPrefault {
		off := name
		if name == "verify-ahead" {
			off = "populate"
		}
		rep.WarmFirstOutputToSteadyByPrefault[name] = ratio(ms, rep.WarmSteadyRunMS)
		rep.WarmFirstOutputToOffByPrefault[name] = ratio(ms, rep.WarmFirstOutputOffMSByPrefault[off])
	}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// warm launches and requires that every layer hit (G3).
// cold launches cfg with no cache file: every layer must be packed into
// the file.
func (b *bencher) cold(cfg runtime.LaunchConfig, layers int) (runtime.LaunchReport, error) {
	for _, f := range []string{b.path, b.path + ".lock"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return runtime.LaunchReport{}, err
		}
	}
	r, err := runtime.Launch(context.Background(), cfg)
	if err != nil {
		return r, err
	}
	if r.Load != spec.LoadMissing || r.Packed != layers || r.HeapBytes != 0 {
		return r, fmt.Errorf("%w: cold launch: load %s, packed %d of %d, heap %d bytes", errBench, r.Load, r.Packed, layers, r.HeapBytes)
	}
	return r, nil
}

// coldWarm is one setting's medians in a coldThenWarm loop, in ms.
type coldWarm struct{ cold, first, steady float64 }

// coldThenWarm measures settings of a cold launch side by side: each round
// launches, for every setting in an order rotating by round, a cold launch
// of cfg with that setting (set applies setting k to a copy) followed by a
// warm launch of cfg with steadyRuns on the file it wrote, whose page
// cache it left. It returns each setting's medians: cold init, the warm
// launch's first output and its steady inference.
func (b *bencher) coldThenWarm(what string, cfg runtime.LaunchConfig, layers int, names []string,
	set func(c *runtime.LaunchConfig, k int), steadyRuns int) ([]coldWarm, error) {
	cold, first, steady := make([][]time.Duration, len(names)), make([][]time.Duration, len(names)), make([][]time.Duration, len(names))
	for i := range b.runs {
		for j := range names {
			k := (i + j) % len(names)
			c := cfg
			set(&c, k)
			r, err := b.cold(c, layers)
			if err != nil {
				return nil, err
			}
			wc := cfg
			wc.SteadyRuns = steadyRuns
			w, err := b.warm(wc, layers)
			if err != nil {
				return nil, err
			}
			cold[k] = append(cold[k], r.InitTime)
			first[k] = append(first[k], w.InitTime+w.RunTime)
			steady[k] = append(steady[k], w.SteadyRunTime)
			b.progress("%s %s %d/%d: cold init %v, warm first output %v", what, names[k], i+1, b.runs,
				r.InitTime.Round(time.Microsecond), (w.InitTime + w.RunTime).Round(time.Microsecond))
		}
	}
	out := make([]coldWarm, len(names))
	for k := range names {
		out[k] = coldWarm{msOf(median(cold[k])), msOf(median(first[k])), msOf(median(steady[k]))}
	}
	return out, nil
}

// aheadName names an AllocateAhead setting in the report: "region" for
// none, else its size in MiB.
func aheadName(a int64) string {
	if a < 0 {
		return "region"
	}
	return strconv.FormatInt(a>>20, 10) + "mib"
}

func (b *bencher) warm(cfg runtime.LaunchConfig, layers int) (runtime.LaunchReport, error) {
	r, err := runtime.Launch(context.Background(), cfg)
	if err != nil {
		return r, err
	}
	if r.Load != spec.LoadOK || r.Packed != 0 || r.Hits != uint64(layers) || r.Misses != 0 {
		return r, fmt.Errorf("%w: warm launch: load %s (%v), %d hits, %d misses, %d packed", errBench, r.Load, r.LoadErr, r.Hits, r.Misses, r.Packed)
	}
	return r, nil
}

// lookups times LookUp of every key of the program in a loaded cache, after
// a first pass that verified the data, so the figure is the index look-up.
func (b *bencher) lookups(rep *benchReport, p *runtime.Program, k *kernels.Kernel) error {
	c, err := cache.Open(cache.Options{Path: b.path})
	if err != nil {
		return err
	}
	defer c.Close()
	be, err := runtime.NewBackend(p, k, nil)
	if err != nil {
		return err
	}
	if err := c.InitializeForProgram("bench-lookup"); err != nil {
		return err
	}
	keys := make([]spec.Key, p.NumLayers())
	for i := range keys {
		keys[i] = be.Key(i)
		if _, ok := c.LookUp(keys[i]); !ok {
			return fmt.Errorf("%w: look-up of %s missed", errBench, keys[i].Weight)
		}
	}
	n := 0
	start := time.Now()
	for time.Since(start) < 200*time.Millisecond {
		for _, key := range keys {
			if _, ok := c.LookUp(key); !ok {
				return fmt.Errorf("%w: look-up of %s missed", errBench, key.Weight)
			}
		}
		n += len(keys)
	}
	d := time.Since(start)
	rep.LookupNS = round2(float64(d.Nanoseconds()) / float64(n))
	rep.LookupsPerSec = float64(int64(float64(n) / d.Seconds()))
	b.progress("look-up: %.0f ns", rep.LookupNS)
	if err := c.Finalize(); err != nil {
		return err
	}
	return c.DeleteProgram("bench-lookup")
}

// upgrade launches with another kernel on the warm file, then once more:
// the first re-packs everything, the second must hit everything (G3).
func (b *bencher) upgrade(rep *benchReport, cfg runtime.LaunchConfig, up *kernels.Kernel) error {
	st0, err := os.Stat(b.path)
	if err != nil {
		return err
	}
	cfg.Kernel = up
	r, err := runtime.Launch(context.Background(), cfg)
	if err != nil {
		return err
	}
	for reason, n := range r.Repacks {
		rep.UpgradeRepacks[string(reason)] = n
	}
	r2, err := runtime.Launch(context.Background(), cfg)
	if err != nil {
		return err
	}
	rep.UpgradeNextMisses = r2.Misses
	rep.FileSizeAfterUpgrade, rep.GarbageAfterUpgrade = r2.FileSize, r2.GarbageBytes
	rep.GrowthBytesAfterUpgrade = r2.FileSize - st0.Size()
	b.progress("kernel upgrade to %s:%s, next launch %d misses, file %d bytes", up.Name(), counts(" repacks", rep.UpgradeRepacks), r2.Misses, r2.FileSize)
	return nil
}

// bandwidth packs every layer, copies the same source floats and CRCs the
// packed bytes, alternating per layer so all three see the same machine
// state; buffers are touched before timing so page faults are not counted.
// mappedFile measures reading and checksumming the cache file through a
// read-only mapping of it, as a warm launch's verification does.
func (b *bencher) mappedFile(rep *benchReport) error {
	f, err := vfs.OS().OpenFile(b.path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return err
	}
	m, err := f.Map(0, int(size), vfs.ProtRead)
	if err != nil {
		return err
	}
	defer m.Close()
	mem := m.Bytes()
	sweep := func() (time.Duration, uint64) {
		t := time.Now()
		var acc uint64
		// One load per cache line: what any pass over the bytes costs.
		for i := 0; i < len(mem); i += 64 {
			acc += uint64(mem[i])
		}
		return time.Since(t), acc
	}
	first, a1 := sweep()
	second, a2 := sweep()
	t := time.Now()
	sum := spec.DataChecksum(mem)
	dsum := time.Since(t)
	t = time.Now()
	crc := spec.CRC32C(mem)
	crcT := time.Since(t)
	gbps := func(d time.Duration) float64 { return round2(float64(size) / d.Seconds() / 1e9) }
	rep.MappedBytes = size
	rep.FirstTouchMS, rep.SweepMS = msOf(first), msOf(second)
	rep.SweepGBps = gbps(second)
	rep.ChecksumGBps, rep.CRC32CGBps = gbps(dsum), gbps(crcT)
	rep.ChecksumToSweep = ratio(rep.ChecksumGBps, rep.SweepGBps)
	rep.CRC32CToSweep = ratio(rep.CRC32CGBps, rep.SweepGBps)
	b.progress("mapped file %d bytes: first touch %.2f ms, sweep %.2f ms, xxh3 %.2f GB/s, crc32c %.2f GB/s (%x %x %08x %08x)",
		size, rep.FirstTouchMS, rep.SweepMS, rep.ChecksumGBps, rep.CRC32CGBps, a1, a2, sum, crc)
	return nil
}

// bandwidth times packing against a plain copy of the same source bytes,
// layer by layer, three passes over the program. Each side starts from the
// source as a launch's packer gets it, just filled by Program.Weights: the
// copy used to run right after the pack and read a source the pack had
// just pulled into the caches, where the pack read it after the fill,
// which for layers of 1 MiB and more (Go's memmove switches to
// non-temporal stores there) had left it in memory only. Each side writes
// its own reused, pre-touched buffer. The time of a shape is the median
// call times its layers, for both sides alike: on a shared machine a
// preempted call would otherwise land on one side only.
func (b *bencher) bandwidth(rep *benchReport, p *runtime.Program, k *kernels.Kernel) error {
	var maxW, maxN, maxPacked int
	for _, l := range p.Layers() {
		maxW, maxN = max(maxW, l.N*l.K), max(maxN, l.N)
		maxPacked = max(maxPacked, k.PackedSize(l.N, l.K))
	}
	w, bias := make([]float32, maxW), make([]float32, maxN)
	cp := make([]float32, maxW+maxN)
	dst := make([]byte, maxPacked)
	for i := range dst {
		dst[i] = 1
	}
	for i := range cp {
		cp[i] = 1
	}
	type times struct {
		shape      packShape
		bytes      int64 // source bytes of one layer
		pack, copy []time.Duration
	}
	var shapes []*times
	type shapeKey struct {
		n, k int
		bias bool
	}
	byShape := map[shapeKey]*times{}
	goruntime.GC()
	var crcT time.Duration
	var packedBytes int64
	var sum uint32
	for pass := range 3 {
		for i, l := range p.Layers() {
			ww, bb := w[:l.N*l.K], bias[:l.N]
			if !l.Bias {
				bb = nil
			}
			key := shapeKey{l.N, l.K, l.Bias}
			st := byShape[key]
			if st == nil {
				st = &times{shape: packShape{N: l.N, K: l.K, Bias: l.Bias}, bytes: int64(4 * (len(ww) + len(bb)))}
				byShape[key] = st
				shapes = append(shapes, st)
			}
			if pass == 0 {
				st.shape.Layers++
			}
			packed := dst[:k.PackedSize(l.N, l.K)]
			p.Weights(i, ww, bias[:l.N])
			t := time.Now()
			if err := k.Pack(packed, l.N, l.K, ww, bb); err != nil {
				return err
			}
			st.pack = append(st.pack, time.Since(t))
			p.Weights(i, ww, bias[:l.N])
			t = time.Now()
			copy(cp[copy(cp, ww):], bb)
			st.copy = append(st.copy, time.Since(t))
			t = time.Now()
			sum ^= spec.CRC32C(packed)
			crcT += time.Since(t)
			packedBytes += int64(len(packed))
		}
	}
	var srcBytes int64
	var packT, copyT time.Duration
	rep.PackByShape = make([]packShape, 0, len(shapes))
	for _, st := range shapes {
		n := time.Duration(st.shape.Layers)
		mp, mc := median(st.pack)*n, median(st.copy)*n
		bytes := st.bytes * int64(n)
		srcBytes, packT, copyT = srcBytes+bytes, packT+mp, copyT+mc
		st.shape.PackGBps, st.shape.CopyGBps = gbps(bytes, mp), gbps(bytes, mc)
		st.shape.PackRatio = ratio(st.shape.PackGBps, st.shape.CopyGBps)
		rep.PackByShape = append(rep.PackByShape, st.shape)
		b.progress("pack %dx%d (%d layers): %.2f GB/s, copy %.2f GB/s (%.2f)", st.shape.N, st.shape.K, st.shape.Layers, st.shape.PackGBps, st.shape.CopyGBps, st.shape.PackRatio)
	}
	rep.PackGBps, rep.CopyGBps = gbps(srcBytes, packT), gbps(srcBytes, copyT)
	rep.CRCGBps = gbps(packedBytes, crcT)
	rep.PackRatio = ratio(rep.PackGBps, rep.CopyGBps)
	b.progress("pack %.2f GB/s, copy %.2f GB/s, crc32c %.2f GB/s (checksum %08x)", rep.PackGBps, rep.CopyGBps, rep.CRCGBps, sum)
	return nil
}

// gbps is n bytes over d in GB/s, rounded as the report's figures are.
func gbps(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return round2(float64(n) / d.Seconds() / 1e9)
}

// packShape is packing against copying for the layers of one shape.
type packShape struct {
	N         int     `json:"n"`
	K         int     `json:"k"`
	Bias      bool    `json:"bias"`
	Layers    int     `json:"layers"`
	PackGBps  float64 `json:"pack_gbps"`
	CopyGBps  float64 `json:"copy_gbps"`
	PackRatio float64 `json:"pack_to_copy_ratio"`
}

// heapLaunch initializes the program packed on the heap (no cache file)
// and returns its init time and, with measure, the growth of the process's
// Private_Dirty while it is live: the packed bytes are anonymous memory
// that was written, so it stays dirty (no file to write it back to).
func heapLaunch(p *runtime.Program, k *kernels.Kernel, measure bool) (dirty int64, init time.Duration, err error) {
	goruntime.GC()
	debug.FreeOSMemory()
	var before int64
	if measure {
		if before, err = privateDirty(); err != nil {
			return 0, 0, err
		}
	}
	c, err := cache.Open(cache.Options{})
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	be, err := runtime.NewBackend(p, k, c)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := be.Init(); err != nil {
		return 0, 0, err
	}
	init = time.Since(start)
	if measure {
		goruntime.GC()
		after, err := privateDirty()
		if err != nil {
			return 0, 0, err
		}
		dirty = after - before
	}
	return dirty, init, be.Destroy()
}

// privateDirty reads Private_Dirty from /proc/self/smaps_rollup (Linux).
func privateDirty() (int64, error) {
	data, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "Private_Dirty:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no Private_Dirty in /proc/self/smaps_rollup")
}

func printBench(w io.Writer, r *benchReport) {
	fmt.Fprintf(w, "preset %s: %d layers, %d packed bytes, kernel %s, median of %d launches\n", r.Preset, r.Layers, r.PackedBytes, r.Kernel, r.Runs)
	fmt.Fprintf(w, "cpu %s, simd %s\n", r.CPU, r.SIMD)
	fmt.Fprintf(w, "program file     %10d bytes, read and parsed in %.2f ms before the launches\n", r.ProgramFileBytes, r.ProgramLoadMS)
	fmt.Fprintf(w, "cold init        %10.2f ms   (run %.2f ms) = read %.2f + pack %.2f + commit %.2f + other %.2f ms\n",
		r.ColdMS, r.ColdRunMS, r.ColdReadMS, r.ColdPackMS, r.ColdCommitMS, r.ColdOtherMS)
	fmt.Fprintf(w, "cold limit       %10.2f ms   (read, pack, pwrite, fdatasync; no cache)  cold/limit %.2fx\n", r.ColdLimitMS, r.ColdToLimit)
	fmt.Fprintf(w, "warm load core   v2 %.3f ms, v3 %.3f ms   (open, initialize, look-ups; no prefault)\n", r.WarmLoadCoreMS["v2"], r.WarmLoadCoreMS["v3"])
	fmt.Fprintf(w, "warm init        %10.2f ms   (run %.2f ms, steady %.2f ms)  cold/warm init %.1fx, data verification %s\n",
		r.WarmMS, r.WarmRunMS, r.WarmSteadyRunMS, r.WarmSpeedup, r.DefaultPolicy)
	fmt.Fprintf(w, "warm first output (init+run): %s/off %.2fx, %s/steady run %.2fx\n",
		r.DefaultPolicy, r.WarmFirstOutputToOff, r.DefaultPolicy, r.WarmFirstOutputToSteadyRun)
	fmt.Fprintf(w, "warm first output %s by prefault (figures above: prefault %s, verify ahead %s):", r.DefaultPolicy, onOff(r.Prefault), onOff(r.VerifyAhead))
	for _, name := range []string{"none", "populate", "verify-ahead"} {
		fmt.Fprintf(w, " %s %.2f ms, /steady %.2fx, /off %.2fx;", name, r.WarmFirstOutputMSByPrefault[name],
			r.WarmFirstOutputToSteadyByPrefault[name], r.WarmFirstOutputToOffByPrefault[name])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "allocated ahead (default %d bytes):", r.AllocateAhead)
	for _, a := range slices.Sorted(maps.Keys(r.ColdMSByAllocateAhead)) {
		fmt.Fprintf(w, " %s: cold init %.2f ms, next first output %.2f ms;", a, r.ColdMSByAllocateAhead[a], r.WarmFirstOutputMSByAllocateAhead[a])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "cold writes (default staged %s):", onOff(r.StagedWrites))
	for _, m := range []string{"mapped", "staged"} {
		fmt.Fprintf(w, " %s: cold init %.2f ms, next first output %.2f ms, /steady %.2fx;", m, r.ColdMSByWrites[m],
			r.WarmFirstOutputMSByWrites[m], r.WarmFirstOutputToSteadyByWrites[m])
	}
	fmt.Fprintln(w)
	for _, p := range verifyPolicies {
		pol := p.String()
		fmt.Fprintf(w, "  verify %-12s %8.2f ms   %.1fx   (init+run %.2f ms)\n", pol, r.WarmMSByPolicy[pol], r.WarmSpeedupByPolicy[pol], r.WarmFirstOutputMSByPolicy[pol])
	}
	fmt.Fprintf(w, "look-up          %10.1f ns   (%.0f /s)\n", r.LookupNS, r.LookupsPerSec)
	if r.MemoryMeasured {
		fmt.Fprintf(w, "dirty after finalize: file mode %d bytes (warm %d), heap mode %d bytes\n", r.DirtyBytesFileMode, r.DirtyBytesFileModeWarm, r.DirtyBytesHeapMode)
	}
	fmt.Fprintf(w, "heap packing, no file: init %.2f ms\n", r.HeapMS)
	fmt.Fprintf(w, "file %d bytes; after %d relaunches grew %d bytes, mtime changed %t\n", r.FileSize, r.Relaunches, r.GrowthBytes100Relaunches, r.MtimeChanged)
	fmt.Fprintf(w, "upgrade to %s:%s, next launch %d misses, file %d bytes (%+d), garbage %d\n",
		r.UpgradeKernel, counts(" repacks", r.UpgradeRepacks), r.UpgradeNextMisses, r.FileSizeAfterUpgrade, r.GrowthBytesAfterUpgrade, r.GarbageAfterUpgrade)
	fmt.Fprintf(w, "pack %.2f GB/s, copy %.2f GB/s (pack/copy %.2f), crc32c %.2f GB/s on a hot buffer\n", r.PackGBps, r.CopyGBps, r.PackRatio, r.CRCGBps)
	fmt.Fprintf(w, "mapped cache file (%d bytes): first touch %.2f ms, sweep %.2f ms (%.2f GB/s)\n",
		r.MappedBytes, r.FirstTouchMS, r.SweepMS, r.SweepGBps)
	fmt.Fprintf(w, "  data checksum (xxh3) %.2f GB/s: xxh3/sweep %.2f; crc32c %.2f GB/s: crc32c/sweep %.2f\n",
		r.ChecksumGBps, r.ChecksumToSweep, r.CRC32CGBps, r.CRC32CToSweep)
}

// median of an even count is the mean of the middle two, so two runs do
// not report the slower one.
func median[T time.Duration | uint64](d []T) T {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

func msOf(d time.Duration) float64 { return ms(d.Seconds()) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round2(a / b)
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
