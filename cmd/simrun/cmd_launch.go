package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/runtime"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

// launchReport is what `simrun launch --json` prints. Digests are hex
// strings so that JSON readers using float64 do not round them.
type launchReport struct {
	Cache   string `json:"cache"`
	Program string `json:"program"`
	Kernel  string `json:"kernel"`
	Format  string `json:"format"`
	// Load is the cache's load outcome: ok, other-format, missing,
	// rejected, locked, disabled or failed; LoadError its typed error.
	Load      string `json:"load"`
	LoadError string `json:"load_error"`
	// EntriesLoaded is the number of entries of the committed index the
	// launch found in the file (0 unless load is "ok"); Entries is the
	// number in the cache's index after the launch.
	EntriesLoaded int               `json:"entries_loaded"`
	Entries       int               `json:"entries"`
	Hits          uint64            `json:"hits"`
	Misses        uint64            `json:"misses"`
	Repacks       map[string]uint64 `json:"repacks"`
	Packed        int               `json:"packed"`
	// HeapBytes are packed bytes in anonymous memory (by reason in
	// HeapByReason); FileBackedBytes those in clean file pages (G5).
	HeapBytes       uint64            `json:"heap_bytes"`
	HeapByReason    map[string]uint64 `json:"heap_by_reason"`
	FileBackedBytes uint64            `json:"file_backed_bytes"`
	FileSize        int64             `json:"file_size"`
	// GarbageBytes is the cache's count of what a rewrite would not keep
	// (Stats.GarbageBytes), which decides compaction; ReclaimableBytes is
	// the same figure under the name inspect gives it, which the text
	// uses: it includes page padding before an appended index, which is
	// no dropped data (inspect's garbage_bytes excludes it).
	GarbageBytes     int64  `json:"garbage_bytes"`
	ReclaimableBytes int64  `json:"reclaimable_bytes"`
	Commits          uint64 `json:"commits"`
	CommitError      string `json:"commit_error"`
	OutputDigest     string `json:"output_digest"`
	// Verified is present with --verify: outputs equal, bit for bit, those
	// of the same program packed on the heap without any cache.
	Verified *bool `json:"verified,omitempty"`
	// InitMS covers load, look-ups, packing, finalize and save (wall time);
	// InitCPUMS is the init thread's CPU time over the same span (Linux),
	// which leaves out waits for a CPU on a loaded machine; RunMS is
	// inference on the fixed input, reported apart.
	InitMS    float64 `json:"init_ms"`
	InitCPUMS float64 `json:"init_cpu_ms"`
	RunMS     float64 `json:"run_ms"`
}

// cmdLaunch performs one process launch of a model against a cache file
// and reports what the cache did. Exit 0 whenever inference succeeded,
// whatever happened to the cache (G8); 1 if inference or --verify failed;
// 2 usage.
func cmdLaunch(e *env, args []string) int {
	cfg, asJSON, code := parseLaunch(e, args)
	if code >= 0 {
		return code
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(e.stderr, "simrun launch: %v\n", err)
		return code
	}

	// Counted before the launch: the cache does not report how many entries
	// it loaded, and a launch that hits nothing must still show them.
	found, before := committedEntries(cfg.CachePath)
	if note := conversionNote(cfg.CachePath, found, cfg.Format, before); note != "" {
		fmt.Fprint(e.stderr, "simrun launch: "+note)
	}
	rep, err := runtime.Launch(context.Background(), cfg)
	if err != nil {
		return fail(exitProblem, err)
	}
	out := newLaunchReport(rep, rep.Format)
	if rep.Load == spec.LoadOK || rep.Load == spec.LoadOtherFormat {
		out.EntriesLoaded = before
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fail(exitProblem, err)
		}
	} else {
		printLaunch(e.stdout, out)
	}
	if rep.VerifyRan && !rep.Verified {
		return fail(exitProblem, fmt.Errorf("outputs differ from heap packing (digest %016x, heap %016x)", rep.OutputDigest, rep.HeapDigest))
	}
	return exitOK
}

// parseLaunch turns launch's flags into the launch they ask for; code is
// -1 when they are valid, the exit code otherwise.
func parseLaunch(e *env, args []string) (cfg runtime.LaunchConfig, asJSONOut bool, code int) {
	fs := newFlagSet(e, "launch", "simrun launch --cache FILE [--model PRESET|FILE] [--seed N] [--kernel NAME] [--format auto|v3|v2]",
		"              [--verify-data on-compute|on-first-use|on-load|off] [--prefault=true|false] [--verify-ahead=true|false]",
		"              [--allocate-ahead BYTES] [--mapped-writes] [--lock-wait auto|DURATION]",
		"              [--verify] [--json] [--replace-foreign] [--read-only]")
	cachePath := fs.String("cache", "", "cache `file` (required; its directory must exist)")
	model := fs.String("model", runtime.PresetSmall, "preset name ("+strings.Join(runtime.Presets(), ", ")+") or program `file`")
	kernelName := fs.String("kernel", "", "kernel `name` (default: the registry's default; see simrun kernels)")
	format := fs.String("format", "auto", "cache file `format`: v3, v2 (ExecuTorch-compatible) or auto (the file's; v3 for a new file)")
	verifyData := fs.String("verify-data", runtime.DefaultVerifyData.String(), "data checksum `policy`: on-compute, on-first-use, on-load or off")
	var defaults runtime.LaunchConfig // the library's defaults are the flags'
	prefault := fs.Bool("prefault", !defaults.DisablePrefault, "populate the cache file's mapping on a second goroutine while the first inference runs")
	verifyAhead := fs.Bool("verify-ahead", !defaults.DisableVerifyAhead, "with --prefault and on-compute, check each layer's data on that goroutine, a few MiB ahead of the compute, instead of only populating")
	ahead := fs.Int64("allocate-ahead", 0, "how far ahead of its reservations a new cache file is allocated, in `bytes` (0: 16 MiB; -1: one region at a time)")
	mapped := fs.Bool("mapped-writes", false, "pack by storing through a writable mapping of the cache file instead of into heap buffers the cache writes into the file at insert (pwrite)")
	lockWait := fs.String("lock-wait", "auto", "how long to wait for a lock another process holds before packing to heap: a `duration` (0: do not wait) or auto (about what packing the model costs)")
	seed := fs.Uint64("seed", 1, "weight seed of a preset model")
	verify := fs.Bool("verify", false, "also run from heap packing and compare outputs bit for bit")
	asJSON := fs.Bool("json", false, "print a JSON report instead of text")
	replaceForeign := fs.Bool("replace-foreign", false, "replace a file at --cache that is not a cache file (left untouched otherwise)")
	readOnly := fs.Bool("read-only", false, "load and serve hits, never write the cache file (misses pack to heap)")
	if err := fs.Parse(args); err != nil {
		return cfg, false, exitUsage
	}
	if code := extraArgs(e, fs, "launch"); code >= 0 {
		return cfg, false, code
	}
	if *cachePath == "" {
		fs.Usage()
		return cfg, false, usageError(e, "launch", "--cache is required")
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(e.stderr, "simrun launch: %v\n", err)
		return code
	}
	cfg = runtime.LaunchConfig{CachePath: *cachePath, Verify: *verify, ReplaceForeign: *replaceForeign, ReadOnly: *readOnly,
		DisablePrefault: !*prefault, DisableVerifyAhead: !*verifyAhead, AllocateAhead: *ahead, MappedWrites: *mapped}
	var err error
	if cfg.LockWait, err = parseLockWait(*lockWait); err != nil {
		return cfg, false, fail(exitUsage, err)
	}
	if cfg.Format, err = parseFormat(*format); err != nil {
		return cfg, false, fail(exitUsage, err)
	}
	pol, err := parseVerifyPolicy(*verifyData)
	if err != nil {
		return cfg, false, fail(exitUsage, err)
	}
	cfg.VerifyData = pol.ID()
	if cfg.Kernel, err = lookupKernel(*kernelName); err != nil {
		return cfg, false, fail(exitUsage, err)
	}
	if cfg.Program, err = loadModel(*model, *seed); err != nil {
		return cfg, false, fail(exitUsage, err)
	}
	return cfg, *asJSON, -1
}

func newLaunchReport(rep runtime.LaunchReport, f spec.Format) launchReport {
	out := launchReport{
		Cache: rep.CachePath, Program: rep.Program, Kernel: rep.Kernel, Format: f.String(),
		Load: rep.Load.String(), LoadError: errString(rep.LoadErr),
		Entries: rep.Entries, Hits: rep.Hits, Misses: rep.Misses,
		Repacks: map[string]uint64{}, Packed: rep.Packed,
		HeapBytes: rep.HeapBytes, HeapByReason: map[string]uint64{},
		FileBackedBytes: rep.FileBytes, FileSize: rep.FileSize, GarbageBytes: rep.GarbageBytes, ReclaimableBytes: rep.GarbageBytes,
		Commits: rep.Commits, CommitError: errString(rep.CommitErr),
		OutputDigest: fmt.Sprintf("%016x", rep.OutputDigest),
		InitMS:       ms(rep.InitTime.Seconds()), InitCPUMS: ms(rep.InitCPU.Seconds()), RunMS: ms(rep.RunTime.Seconds()),
	}
	for r, n := range rep.Repacks {
		out.Repacks[string(r)] = n
	}
	for r, n := range rep.HeapByReason {
		if n != 0 {
			out.HeapByReason[string(r)] = n
		}
	}
	if rep.VerifyRan {
		v := rep.Verified
		out.Verified = &v
	}
	return out
}

func printLaunch(w io.Writer, r launchReport) {
	fmt.Fprintf(w, "cache      %s (%s)\n", r.Cache, r.Format)
	fmt.Fprintf(w, "program    %s, kernel %s\n", r.Program, r.Kernel)
	load := r.Load
	if r.LoadError != "" {
		load += ": " + r.LoadError
	}
	fmt.Fprintf(w, "load       %s (%d entries)\n", load, r.EntriesLoaded)
	fmt.Fprintf(w, "look-ups   %d hits, %d misses, %d packed%s\n", r.Hits, r.Misses, r.Packed, counts(" — repacks", r.Repacks))
	fmt.Fprintf(w, "memory     %d bytes file-backed, %d bytes heap%s\n", r.FileBackedBytes, r.HeapBytes, counts(" —", r.HeapByReason))
	fmt.Fprintf(w, "file       %d bytes, %d reclaimable, %d entries, %d commits\n", r.FileSize, r.ReclaimableBytes, r.Entries, r.Commits)
	if r.CommitError != "" {
		fmt.Fprintf(w, "commit     failed: %s\n", r.CommitError)
	}
	fmt.Fprintf(w, "output     %s\n", r.OutputDigest)
	if r.Verified != nil {
		fmt.Fprintf(w, "verified   %t\n", *r.Verified)
	}
	fmt.Fprintf(w, "time       init %.2f ms, run %.2f ms\n", r.InitMS, r.RunMS)
}

// counts renders a reason→count map in a stable order, or "" when empty.
func counts(prefix string, m map[string]uint64) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return prefix + " " + strings.Join(parts, ", ")
}

// committedEntries returns the format of the file at path and the number
// of entries of the index committed in it, or FormatUnknown and 0 if it
// has none that parses.
func committedEntries(path string) (spec.Format, int) {
	f, size, err := openRegular(path)
	if err != nil {
		return spec.FormatUnknown, 0
	}
	defer f.Close()
	ft, err := spec.DetectFormat(f, size)
	if err != nil {
		return spec.FormatUnknown, 0
	}
	switch ft {
	case spec.FormatV3:
		if v, err := spec.ParseV3(f, size); err == nil {
			return ft, len(v.Entries)
		}
	case spec.FormatV2:
		if v, err := spec.ParseV2(f, size); err == nil {
			return ft, len(v.Entries)
		}
	}
	return spec.FormatUnknown, 0
}

// conversionNote is what a launch that names format named says before it
// converts a file of format got holding n entries, "" when it converts
// nothing: a conversion is the user's to ask for, and from v2 it drops
// what the launch does not look up (docs/paths.md).
func conversionNote(path string, got, named spec.Format, n int) string {
	if named == spec.FormatUnknown || got == spec.FormatUnknown || got == named {
		return ""
	}
	what := "every entry is carried over"
	if got == spec.FormatV2 {
		what = "entries this launch does not look up are dropped"
		if named == spec.FormatV3 {
			what += "; ExecuTorch can no longer load the file"
		}
	}
	return fmt.Sprintf("converting %s (%s, %d entries) to %s, as --format %s asks: %s\n", path, got, n, named, named, what)
}

var errUsage = errors.New("usage")

func parseFormat(s string) (spec.Format, error) {
	switch s {
	case "v3":
		return spec.FormatV3, nil
	case "v2":
		return spec.FormatV2, nil
	case "auto", "":
		return spec.FormatUnknown, nil
	}
	return spec.FormatUnknown, fmt.Errorf("%w: --format %q (want v3, v2 or auto)", errUsage, s)
}

// parseLockWait reads --lock-wait into LaunchConfig.LockWait: auto is 0
// (the runtime's choice), a zero duration negative (do not wait).
func parseLockWait(s string) (time.Duration, error) {
	if s == "auto" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: --lock-wait %q (want auto or a duration such as 0, 200ms, 2s)", errUsage, s)
	}
	if d == 0 {
		return -1, nil
	}
	return d, nil
}

// verifyPolicies are the data-checksum policies simrun offers, in the
// order spec's policy table lists them, which is the order its outputs use.
var verifyPolicies = func() []cache.VerifyPolicy {
	var ps []cache.VerifyPolicy
	for _, row := range spec.VerifyPolicies() {
		if p, ok := cache.PolicyByID(row.ID); ok {
			ps = append(ps, p)
		}
	}
	return ps
}()

func parseVerifyPolicy(s string) (cache.VerifyPolicy, error) {
	if p, ok := cache.PolicyByID(spec.VerifyPolicyID(s)); ok {
		return p, nil
	}
	return 0, fmt.Errorf("%w: --verify-data %q (want on-compute, on-first-use, on-load or off)", errUsage, s)
}

func lookupKernel(name string) (runtime.Kernel, error) {
	reg := kernels.NewRegistry()
	if name == "" {
		return reg.Default(), nil
	}
	if k, ok := reg.Lookup(name); ok {
		return k, nil
	}
	var names []string
	for _, k := range reg.Kernels() {
		names = append(names, k.Name())
	}
	return nil, fmt.Errorf("%w: unknown kernel %q (have %s)", errUsage, name, strings.Join(names, ", "))
}

// loadModel takes a preset name first, so that a file called "small" in the
// working directory does not change what `--model small` means.
func loadModel(model string, seed uint64) (*runtime.Program, error) {
	if slices.Contains(runtime.Presets(), model) {
		return runtime.Preset(model, seed)
	}
	p, err := runtime.ReadProgramFile(model)
	if err != nil {
		return nil, fmt.Errorf("--model %q is neither a preset (%s) nor a readable program file: %w",
			model, strings.Join(runtime.Presets(), ", "), err)
	}
	return p, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// ms converts seconds to milliseconds rounded to microseconds.
func ms(sec float64) float64 { return float64(int64(sec*1e6+0.5)) / 1e3 }
