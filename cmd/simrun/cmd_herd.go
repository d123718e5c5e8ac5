package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/runtime"
)

// herdReport is what `simrun herd --json` prints.
type herdReport struct {
	// AloneMS is the median wall time of one cold launch with no herd.
	AloneMS float64   `json:"alone_ms"`
	Rows    []herdRow `json:"rows"`
}

// herdRow is one line of `simrun herd`: rounds of n launches started at
// once, as separate processes, on one new cache path, with one lock wait.
type herdRow struct {
	// LockWait is the --lock-wait of the launches: a duration, or auto
	// (runtime.LockWaitFor the program).
	LockWait string `json:"lock_wait"`
	N        int    `json:"n"`
	Rounds   int    `json:"rounds"`
	// WallMS is the median over rounds of the time from the first start
	// to the last exit; WallToNoWait divides it by the same n's median
	// with lock wait 0, measured in the same run.
	WallMS       float64 `json:"wall_ms"`
	WallToNoWait float64 `json:"wall_to_no_wait"`
	// Fallbacks counts the launches, over every round, that packed
	// anything to heap (a busy lock); Launches all of them.
	Fallbacks int `json:"fallbacks"`
	Launches  int `json:"launches"`
	// PeakHeapBytes is the largest sum, over a round's launches, of packed
	// bytes held on the heap: dirty memory the processes hold at once.
	// PeakRSSBytes is the largest sum of the processes' peak resident
	// sets (getrusage), everything they touched included.
	PeakHeapBytes int64 `json:"peak_heap_bytes"`
	PeakRSSBytes  int64 `json:"peak_rss_bytes"`
	// MaxFallbackInitMS is the longest init time of a launch that fell back:
	// what waiting cost the launches that waited in vain.
	MaxFallbackInitMS float64 `json:"max_fallback_init_ms"`
}

// cmdHerd measures a herd: n processes launching one program at once on
// one new cache path, for each lock wait (docs/benchmarks.md, "A herd of
// launches"). Each launch is `simrun launch --json` in a process of its
// own; their outputs must agree. Exit 1 if a launch failed or two outputs
// differ.
func cmdHerd(e *env, args []string) int {
	fs := newFlagSet(e, "herd", "simrun herd [--model PRESET|FILE] [--layers N] [--sizes 2,4,8,12] [--lock-waits 0,100ms,...] [--rounds N] [--json]")
	model := fs.String("model", "", "preset name or program `file` (default: a program of --layers 512x512 layers written for the run)")
	layers := fs.Int("layers", 24, "layers of the default program, 512x512 with bias each (about 1.05 MB packed)")
	sizes := fs.String("sizes", "2,4,8,12", "herd `sizes`: launches started at once")
	waits := fs.String("lock-waits", "0,100ms,500ms,2s,auto", "lock `waits` to measure, comma-separated: durations, or auto (the default of launch)")
	rounds := fs.Int("rounds", 3, "herds per size and wait (the wall time is their median)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return exitUsage
	}
	if code := checkRanges(e, "herd", atLeast("rounds", int64(*rounds), 1), between("layers", int64(*layers), 1, 1024)); code >= 0 {
		return code
	}
	ns, err := parseList(*sizes, strconv.Atoi)
	if err != nil || slices.ContainsFunc(ns, func(n int) bool { return n < 1 || n > 64 }) {
		return usageError(e, "herd", "--sizes %q: want comma-separated counts from 1 to 64", *sizes)
	}
	ws, err := parseList(*waits, func(s string) (string, error) {
		_, err := parseLockWait(s)
		return s, err
	})
	if err != nil {
		return usageError(e, "herd", "--lock-waits %q: want comma-separated durations or auto, none negative", *waits)
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun herd: %v\n", err)
		return exitProblem
	}
	dir, err := os.MkdirTemp("", "simrun-herd-")
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun herd: %v\n", err)
		return exitProblem
	}
	defer os.RemoveAll(dir)
	if *model == "" {
		*model = filepath.Join(dir, "herd.program")
		p, err := herdProgram(*layers)
		if err == nil {
			err = runtime.WriteProgramFile(*model, p)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "simrun herd: %v\n", err)
			return exitProblem
		}
	}

	h := herd{exe: exe, dir: dir, model: *model}
	// One cold launch alone: what packing costs a launch with no herd,
	// the yardstick of a lock wait.
	alone, err := h.measure(1, "0", *rounds)
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun herd: %v\n", err)
		return exitProblem
	}
	var rows []herdRow
	noWait := map[int]float64{}
	for _, w := range ws {
		for _, n := range ns {
			row, err := h.measure(n, w, *rounds)
			if err != nil {
				fmt.Fprintf(e.stderr, "simrun herd: %v\n", err)
				return exitProblem
			}
			if d, err := time.ParseDuration(w); err == nil && d == 0 {
				noWait[n] = row.WallMS
			}
			if base := noWait[n]; base > 0 {
				row.WallToNoWait = row.WallMS / base
			}
			rows = append(rows, row)
			if e.stderrIsTerminal() {
				fmt.Fprintf(e.stderr, "lock wait %s, %d at once: %.0f ms\n", w, n, row.WallMS)
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(herdReport{AloneMS: alone.WallMS, Rows: rows}); err != nil {
			return exitProblem
		}
		return exitOK
	}
	fmt.Fprintf(e.stdout, "one cold launch alone: %.0f ms (median of %d)\n", alone.WallMS, *rounds)
	printHerd(e.stdout, rows)
	return exitOK
}

// herdProgram is the default program of a herd: layers of 512x512 with
// bias, large enough that packing takes longer than starting a process.
func herdProgram(layers int) (*runtime.Program, error) {
	ls := make([]runtime.Layer, layers)
	for i := range ls {
		ls[i] = runtime.Layer{Name: fmt.Sprintf("l%d", i), N: 512, K: 512, Bias: true}
		if i > 0 {
			ls[i].Input = ls[i-1].Name
		}
	}
	return runtime.NewSynthetic("herd", 1, ls)
}

type herd struct {
	exe, dir, model string
	seq             int
}

// measure runs rounds herds of n launches with lock wait w, each on a new
// path.
func (h *herd) measure(n int, w string, rounds int) (herdRow, error) {
	row := herdRow{LockWait: w, N: n, Rounds: rounds}
	walls := make([]time.Duration, 0, rounds)
	for range rounds {
		h.seq++
		path := filepath.Join(h.dir, fmt.Sprintf("herd-%d.cache", h.seq))
		cmds := make([]*exec.Cmd, n)
		outs := make([]*bytes.Buffer, n)
		for i := range cmds {
			outs[i] = &bytes.Buffer{}
			// Args[0] "simrun": the test binary runs as simrun by that name.
			cmds[i] = &exec.Cmd{Path: h.exe, Args: []string{"simrun", "launch", "--cache", path, "--model", h.model,
				"--lock-wait", w, "--json"}, Stdout: outs[i], Stderr: outs[i]}
		}
		start := time.Now()
		for i, c := range cmds {
			if err := c.Start(); err != nil {
				for _, c := range cmds[:i] {
					_ = c.Wait()
				}
				return row, err
			}
		}
		var heap, rss int64
		digest := ""
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				return row, fmt.Errorf("launch %d of %d: %w: %s", i, n, err, outs[i])
			}
			var r launchReport
			if err := json.Unmarshal(outs[i].Bytes(), &r); err != nil {
				return row, fmt.Errorf("launch %d of %d: %w: %s", i, n, err, outs[i])
			}
			if digest != "" && r.OutputDigest != digest {
				return row, fmt.Errorf("launch %d of %d: output %s, another launch's %s", i, n, r.OutputDigest, digest)
			}
			digest = r.OutputDigest
			row.Launches++
			if r.HeapBytes > 0 {
				row.Fallbacks++
				row.MaxFallbackInitMS = max(row.MaxFallbackInitMS, r.InitMS)
			}
			heap += int64(r.HeapBytes)
			if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rss += ru.Maxrss << 10 // KiB on Linux
			}
		}
		walls = append(walls, time.Since(start))
		row.PeakHeapBytes, row.PeakRSSBytes = max(row.PeakHeapBytes, heap), max(row.PeakRSSBytes, rss)
		if err := checkHerdFile(path); err != nil {
			return row, err
		}
		_ = os.Remove(path)
	}
	row.WallMS = msOf(median(walls))
	return row, nil
}

// checkHerdFile requires the file a herd left to pass the cache's own
// check, as every later launch would load it.
func checkHerdFile(path string) error {
	c, err := cache.Open(cache.Options{Path: path})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.InitializeForProgram("check"); err != nil {
		return err
	}
	if err := c.Check(); err != nil {
		return fmt.Errorf("the file the herd left: %w", err)
	}
	return nil
}

// parseList parses a comma-separated list with parse.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func printHerd(w io.Writer, rows []herdRow) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "lock wait\tat once\twall ms\tto wait 0\theap fallbacks\tpeak heap MB\tpeak RSS MB\tlongest fallback init ms\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%d of %d\t%.1f\t%.0f\t%.0f\t\n",
			r.LockWait, r.N, r.WallMS, r.WallToNoWait, r.Fallbacks, r.Launches,
			float64(r.PeakHeapBytes)/1e6, float64(r.PeakRSSBytes)/1e6, r.MaxFallbackInitMS)
	}
	_ = tw.Flush()
}
