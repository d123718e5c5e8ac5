package runtime

import (
	"context"
	"fmt"
	"math"
	goruntime "runtime"
	"slices"
	"time"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

// DefaultVerifyData is the data-checksum policy of a launch whose
// LaunchConfig.VerifyData is empty: the cache's default
// (cache.DefaultVerifyData). The backend reads every layer's packed bytes
// through Cache.Bytes right before its compute, so each entry is checked
// there, once, while the compute is about to read it, and initialization
// checks nothing (docs/cache.md, "Data verification").
const DefaultVerifyData = cache.DefaultVerifyData

// A launch that finds the lock busy waits about what packing its program
// would cost, within [MinLockWait, MaxLockWait] (LockWaitFor), never
// longer. In a herd of launches on one new path (docs/benchmarks.md, "A
// herd of launches") a wait shorter than one cold launch left most
// launches packing to heap, each holding its whole packing in dirty
// memory; a wait as long as one cold launch let every launch load what
// the first one committed. Waiting longer buys nothing from a writer that
// is packing the same program, and bounds what a launch loses behind a
// holder that keeps the lock (an ExecuTorch writer holds it for its
// life): at most one packing's time, then it packs as it would have.
const (
	// MinLockWait covers a holder committing a small program and the
	// scheduling of processes started at once.
	MinLockWait = 50 * time.Millisecond
	// MaxLockWait bounds the wait of the largest programs.
	MaxLockWait = 5 * time.Second
	// lockWaitPerMiB is a cold launch's time per MiB of weights: llama-1184
	// (593 MB packed) took 744-1,862 ms cold on the benchmark machine.
	lockWaitPerMiB = 2 * time.Millisecond
)

// LockWaitFor is the lock wait of a launch of p when LaunchConfig.LockWait
// is 0: lockWaitPerMiB per MiB of p's f32 weights, within [MinLockWait,
// MaxLockWait].
func LockWaitFor(p *Program) time.Duration {
	mib := p.TotalWeights() * 4 >> 20
	return min(max(time.Duration(mib)*lockWaitPerMiB, MinLockWait), MaxLockWait)
}

// LaunchConfig describes one process launch of a program against a cache.
// The zero value of each cache setting is the cache's default (the zero
// cache.Options), which simrun's flags default to as well.
type LaunchConfig struct {
	// CachePath is the cache file; "" packs to the heap and touches no file.
	CachePath string
	// Program is required.
	Program *Program
	// Kernel packs and computes; nil means the default kernel of
	// kernels.NewRegistry().
	Kernel Kernel
	// Verify also runs the program from heap packing and compares outputs
	// bit for bit (LaunchReport.Verified).
	Verify bool
	// FS is the filesystem seam for the cache; nil means the OS.
	FS vfs.FS
	// Manager, when set, supplies the cache (one instance per path per
	// process). nil means a Manager private to this launch, so that the
	// launch behaves like a fresh process: it loads the file from scratch.
	Manager *cache.Manager
	// VerifyData names the data-checksum policy (spec.VerifyPolicies);
	// empty means DefaultVerifyData. It is a name rather than a
	// cache.VerifyPolicy so that the zero LaunchConfig gets the policy that
	// suits this runtime, not the cache's zero value, which is for callers
	// that compute from a look-up's pointer and never call Bytes.
	VerifyData spec.VerifyPolicyID
	// LockWait is how long to wait for a lock another process holds
	// before packing to heap: 0 means LockWaitFor(Program), a negative
	// value does not wait.
	//
	// Format, ReplaceForeign, ReadOnly, DisablePrefault,
	// DisableVerifyAhead, AllocateAhead and MappedWrites are passed to
	// cache.Options.
	Format             spec.Format
	LockWait           time.Duration
	ReplaceForeign     bool
	ReadOnly           bool
	DisablePrefault    bool
	DisableVerifyAhead bool
	AllocateAhead      int64
	MappedWrites       bool
	// Rows is the number of input rows (M); 0 means 1. InputSeed derives
	// the input (Program.Input), so launches in separate processes agree.
	Rows      int
	InputSeed uint64
	// MeasureMemory reads /proc/self/smaps after inference to fill
	// LaunchReport.MappedRSS and MappedDirty (about 1 ms; Linux only).
	MeasureMemory bool
	// SteadyRuns runs inference that many more times after the first and
	// reports their median as LaunchReport.SteadyRunTime: inference with
	// the weights resident and checked, the floor a first inference is
	// compared with.
	SteadyRuns int

	_ struct{}
}

// LaunchReport is what one launch found and did.
type LaunchReport struct {
	// CachePath, Program and Kernel name the cache file (LaunchConfig),
	// the program and the kernel that packed and computed.
	CachePath string
	Program   string
	Kernel    string
	// Load is the outcome of loading the cache file, LoadErr its typed error
	// (a rejected or unreadable file is not a launch error: G7, G8).
	Load    spec.LoadOutcome
	LoadErr error
	// Format is the cache file format used: the one configured, or the
	// file's when none was.
	Format spec.Format
	// Hits and Misses are the cache's look-up answers; Repacks the misses
	// by reason. Packed is the number of layers this launch packed, Private
	// those the backend packed into its own memory (cache off or refusing).
	Hits, Misses uint64
	Repacks      map[cache.RepackReason]uint64
	// DataChecks counts the data checks made by the end of the launch
	// (cache.Stats.Verified), DataChecksAhead those of them the prefault
	// goroutine made before the compute reached their entries
	// (unless LaunchConfig.DisableVerifyAhead).
	DataChecks, DataChecksAhead uint64
	// Entries is the number of entries in the cache's index after the
	// launch: on a warm launch with nothing new, the entries it loaded.
	Entries int
	Packed  int
	Private int
	// HeapBytes is the packed bytes on the heap (sum over HeapByReason);
	// FileBytes those in clean file-backed pages (G5).
	HeapBytes    uint64
	HeapByReason map[cache.HeapReason]uint64
	FileBytes    uint64
	// FileSize and GarbageBytes are the cache file's size and the part of
	// it a rewrite would not keep (cache.Stats); Commits counts the
	// launch's commits and CommitErr holds the last one's failure (G8: a
	// failed commit is not a launch error).
	FileSize     int64
	GarbageBytes int64
	Commits      uint64
	CommitErr    error
	// SourceBytesHeld is what the backend still referenced of unpacked
	// sources after finalize: zero (G5).
	SourceBytesHeld int
	// MappedRSS and MappedDirty are the resident and dirty bytes of this
	// process's mappings of the cache file after inference, from
	// /proc/self/smaps (Linux, with MeasureMemory; MemoryMeasured is false
	// otherwise). G5: MappedDirty stays about zero on cold and warm launches.
	MemoryMeasured         bool
	MappedRSS, MappedDirty int64
	// Output and OutputDigest are the program's output on the fixed input
	// and the digest of every layer's output (Result).
	Output       []float32
	OutputDigest uint64
	// VerifyRan reports that LaunchConfig.Verify ran the program from heap
	// packing too; Verified that the outputs then equal those of heap
	// packing bit for bit; HeapDigest is the latter's.
	VerifyRan  bool
	Verified   bool
	HeapDigest uint64
	// InitTime covers look-ups, packing and finalize; RunTime the first
	// inference; SteadyRunTime the median of LaunchConfig.SteadyRuns more.
	InitTime, RunTime, SteadyRunTime time.Duration
	// InitCPU is the init thread's CPU time (Linux; else 0): InitTime
	// without waits for a CPU.
	InitCPU time.Duration
	// SourceTime, PackTime and FinalizeTime split InitTime as
	// InitStats does: reading unpacked weights, packing them, the commit.
	SourceTime, PackTime, FinalizeTime time.Duration
}

// CacheOptions returns the cache options of a launch of cfg: its cache
// settings, with an empty VerifyData resolved to DefaultVerifyData, or an
// *cache.OptionsError for an unknown policy name.
func (cfg LaunchConfig) CacheOptions() (cache.Options, error) {
	verify := DefaultVerifyData
	if cfg.VerifyData != "" {
		p, ok := cache.PolicyByID(cfg.VerifyData)
		if !ok {
			return cache.Options{}, &cache.OptionsError{Field: "VerifyData", Value: string(cfg.VerifyData)}
		}
		verify = p
	}
	return cache.Options{
		Path: cfg.CachePath, FS: cfg.FS, Format: cfg.Format,
		VerifyData: verify, LockWait: lockWait(cfg),
		ReplaceForeign: cfg.ReplaceForeign, ReadOnly: cfg.ReadOnly,
		DisablePrefault: cfg.DisablePrefault, DisableVerifyAhead: cfg.DisableVerifyAhead, AllocateAhead: cfg.AllocateAhead,
		MappedWrites: cfg.MappedWrites,
		// The backend never touches a reservation after its insert, and
		// the kernels' packers write every byte (kernels.Kernel.Pack).
		ReuseStaging: true,
	}, nil
}

// lockWait resolves LaunchConfig.LockWait: 0 is LockWaitFor(Program),
// negative no wait.
func lockWait(cfg LaunchConfig) time.Duration {
	switch {
	case cfg.LockWait < 0:
		return 0
	case cfg.LockWait == 0 && cfg.Program != nil:
		return LockWaitFor(cfg.Program)
	case cfg.LockWait == 0:
		return MinLockWait
	}
	return cfg.LockWait
}

// Launch performs one launch: open the cache for CachePath, initialize the
// program (look up or pack, finalize), save, run inference on the fixed
// input and report. Cache trouble is reported, never returned (G8); the
// error is for invalid configuration or failed inference.
func Launch(ctx context.Context, cfg LaunchConfig) (LaunchReport, error) {
	var rep LaunchReport
	if cfg.Program == nil {
		return rep, ErrNoProgram
	}
	if cfg.Kernel == nil {
		cfg.Kernel = kernels.NewRegistry().Default()
	}
	if cfg.Rows <= 0 {
		cfg.Rows = 1
	}
	rep.CachePath, rep.Program, rep.Kernel = cfg.CachePath, cfg.Program.Name(), cfg.Kernel.Name()
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	opts, err := cfg.CacheOptions()
	if err != nil {
		return rep, fmt.Errorf("runtime: launch: %w", err)
	}
	mgr := cfg.Manager
	if mgr == nil {
		mgr = cache.NewManager(cfg.FS)
	}
	c, release, err := mgr.Get(opts)
	if err != nil {
		return rep, fmt.Errorf("runtime: launch: %w", err)
	}
	defer release()

	b, err := NewBackend(cfg.Program, cfg.Kernel, c)
	if err != nil {
		return rep, err
	}
	goruntime.LockOSThread()
	cpu0, cpuOK := threadCPU()
	start := time.Now()
	if err := b.Init(); err != nil {
		goruntime.UnlockOSThread()
		return rep, fmt.Errorf("runtime: launch: %w", err)
	}
	// Finalize already committed what was new; this explicit save must
	// write nothing then (G4), which launch tests check through FileSize.
	_ = c.Save()
	rep.InitTime = time.Since(start)
	if cpu1, ok := threadCPU(); ok && cpuOK {
		rep.InitCPU = cpu1 - cpu0
	}
	goruntime.UnlockOSThread()
	defer b.Destroy()

	if err := ctx.Err(); err != nil {
		return rep, err
	}
	x := cfg.Program.Input(cfg.Rows, cfg.InputSeed)
	start = time.Now()
	res, err := b.Run(x, cfg.Rows)
	if err != nil {
		return rep, fmt.Errorf("runtime: launch: %w", err)
	}
	rep.RunTime = time.Since(start)
	rep.Output, rep.OutputDigest = res.Output, res.Digest
	if cfg.SteadyRuns > 0 {
		steady := make([]time.Duration, cfg.SteadyRuns)
		for i := range steady {
			start := time.Now()
			if _, err := b.Run(x, cfg.Rows); err != nil {
				return rep, fmt.Errorf("runtime: launch: %w", err)
			}
			steady[i] = time.Since(start)
		}
		rep.SteadyRunTime = medianDuration(steady)
	}
	if cfg.MeasureMemory && cfg.CachePath != "" {
		rep.MappedRSS, rep.MappedDirty, rep.MemoryMeasured = mappedMemory(cfg.CachePath)
	}

	bs := b.Stats()
	rep.Packed, rep.Private, rep.SourceBytesHeld = bs.Packed, bs.Private, b.SourceBytesHeld()
	rep.SourceTime, rep.PackTime, rep.FinalizeTime = bs.SourceTime, bs.PackTime, bs.FinalizeTime
	st := c.Stats()
	rep.Entries = len(c.Names())
	rep.Load, rep.LoadErr, rep.Format = st.Load, st.LoadErr, st.Format
	rep.Hits, rep.Misses, rep.Repacks = st.Hits, st.Misses, st.Repacks
	rep.DataChecks, rep.DataChecksAhead = st.Verified, st.VerifiedAhead
	rep.HeapByReason, rep.FileBytes = st.HeapBytes, st.FileBytes
	for _, n := range st.HeapBytes {
		rep.HeapBytes += n
	}
	rep.FileSize, rep.GarbageBytes = st.FileSize, st.GarbageBytes
	rep.Commits, rep.CommitErr = st.Commits, st.CommitErr

	if cfg.Verify {
		heap, err := heapRun(cfg.Program, cfg.Kernel, x, cfg.Rows)
		if err != nil {
			return rep, fmt.Errorf("runtime: launch: verify: %w", err)
		}
		rep.VerifyRan, rep.HeapDigest = true, heap.Digest
		rep.Verified = heap.Digest == res.Digest && bitsEqual(heap.Output, res.Output)
	}
	return rep, nil
}

// heapRun runs p from heap packing with a cache of its own: the reference
// every file-backed launch must match bit for bit.
func heapRun(p *Program, k Kernel, x []float32, m int) (*Result, error) {
	c, err := cache.Open(cache.Options{})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	b, err := NewBackend(p, k, c)
	if err != nil {
		return nil, err
	}
	if err := b.Init(); err != nil {
		return nil, err
	}
	defer b.Destroy()
	return b.Run(x, m)
}

func bitsEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// medianDuration is the middle of d once sorted (the upper middle of an
// even count); d is sorted in place.
func medianDuration(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
