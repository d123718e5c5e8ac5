package docs

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The package-benchmark table of benchmarks.md is generated, as the
// simrun bench table is, from the output the run that measured it wrote
// (the go test -bench lines, committed as they came) and the note of that
// run (command, commit, date, machine, load). A new run replaces both; then
//
//	go test ./docs -run GoBenchTable -update

const (
	goBenchResults = "testdata/bench/go.txt"
	goBenchRunNote = "testdata/bench/go.run"
)

var (
	goBenchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)
	goBenchPair = regexp.MustCompile(`(\S+)\s+(\S+)`)
)

// parseGoBench reads standard go test -bench output into benchFields: each
// benchmark, named "pkg/Name/sub" by the last element of its package path,
// maps each unit it reports to its value. It also returns the CPUs the
// output names.
func parseGoBench(out string) (benchFields, []string, error) {
	r := benchFields{}
	var cpus []string
	pkg := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = p[strings.LastIndex(p, "/")+1:]
			continue
		}
		if c, ok := strings.CutPrefix(line, "cpu: "); ok {
			if c = strings.TrimSpace(c); !slices.Contains(cpus, c) {
				cpus = append(cpus, c)
			}
			continue
		}
		m := goBenchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if pkg == "" {
			return nil, nil, fmt.Errorf("%q comes before any pkg: line", m[1])
		}
		units := map[string]any{}
		for _, p := range goBenchPair.FindAllStringSubmatch(m[2], -1) {
			v, err := strconv.ParseFloat(p[1], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %q is not a number", m[1], p[1])
			}
			units[p[2]] = v
		}
		r[pkg+"/"+strings.TrimPrefix(m[1], "Benchmark")] = units
	}
	if len(r) == 0 {
		return nil, nil, fmt.Errorf("no benchmark lines")
	}
	return r, cpus, sc.Err()
}

// over returns the values of unit over every benchmark whose name matches
// re, failing when none does (a renamed benchmark must fail here).
func (r benchFields) over(re, unit string) ([]float64, error) {
	pat := regexp.MustCompile(re)
	var out []float64
	for name := range r {
		if pat.MatchString(name) {
			v, err := r.in(name, unit)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no benchmark matches %s", re)
	}
	return out, nil
}

// span shows the range of unit over the benchmarks matching re.
func (r benchFields) span(re, unit, format string) (string, error) {
	v, err := r.over(re, unit)
	if err != nil {
		return "", err
	}
	lo, hi := slices.Min(v), slices.Max(v)
	if lo == hi {
		return fmt.Sprintf(format, lo), nil
	}
	return fmt.Sprintf(format+"–"+format, lo, hi), nil
}

// ratio is benchmark a's unit over benchmark b's.
func (r benchFields) ratio(a, b, unit string) (float64, error) {
	x, err := r.in(a, unit)
	if err != nil {
		return 0, err
	}
	y, err := r.in(b, unit)
	if err != nil {
		return 0, err
	}
	return x / y, nil
}

func spanRow(figure, re, unit, format string) benchGoal {
	return benchGoal{figure: figure, value: func(r benchFields) (string, error) { return r.span(re, unit, format) }}
}

func ratioRow(figure, a, b, unit string) benchGoal {
	return benchGoal{figure: figure, value: func(r benchFields) (string, error) {
		v, err := r.ratio(a, b, unit)
		return fmt.Sprintf("%.2f", v), err
	}}
}

// atLeast holds every value of unit over the benchmarks matching re to min.
func atLeast(re, unit string, min float64) func(r benchFields) (bool, error) {
	return func(r benchFields) (bool, error) {
		v, err := r.over(re, unit)
		return err == nil && slices.Min(v) >= min, err
	}
}

// The default kernel on this CPU's best compute path, and the paths below it.
const (
	packBest  = `^kernels/PackVsCopy/f32-goi-nr16/`
	fcBest    = `^kernels/FCVsGonum/f32-goi-nr16-avx[^/]*/M=(8|64)$`
	fcGo      = `^kernels/FCVsGonum/f32-goi-nr16-go[^/]*/`
	cacheCold = "cache/Cold1184"
)

var goBenchRows = []benchGoal{
	func() benchGoal {
		g := spanRow("`kernels` PackVsCopy: packing / copy, default kernel (`best-x-copy`, 1024² and 4096²)", packBest, "best-x-copy", "%.2f")
		g.goal, g.met = "≥ 0.6", atLeast(packBest, "best-x-copy", 0.6)
		return g
	}(),
	spanRow("`kernels` PackVsCopy: the same kernel on the portable Go and AVX2 paths", `^kernels/PackVsCopy/f32-goi-nr16-(go|avx2-fma)/`, "best-x-copy", "%.2f"),
	func() benchGoal {
		g := spanRow("`kernels` FCVsGonum: FC on packed weights / gonum `Sgemm`, SIMD paths, M = 8 and 64 (`best-x-gonum`)", fcBest, "best-x-gonum", "%.1f×")
		g.goal, g.met = "≥ 4×", atLeast(fcBest, "best-x-gonum", 4)
		return g
	}(),
	spanRow("`kernels` FCVsGonum: the portable Go path, M = 1, 8, 64", fcGo, "best-x-gonum", "%.2f×"),
	spanRow("`spec` ParseV3, 1,184 entries: ns per entry", `^spec/ParseV3/entries=1184$`, "ns/entry", "%.0f ns"),
	func() benchGoal {
		re := `^spec/ParseV3/entries=1000000$`
		g := spanRow("`spec` ParseV3, a million entries: ns per entry", re, "ns/entry", "%.0f ns")
		g.goal = "≤ 100 ns"
		g.met = func(r benchFields) (bool, error) {
			v, err := r.over(re, "ns/entry")
			return err == nil && slices.Max(v) <= 100, err
		}
		return g
	}(),
	ratioRow("`impl/cache` 1,184 entries (40 MB): cold / warm with verification off", cacheCold, "cache/Warm1184/off", "ns/op"),
	ratioRow("`impl/cache` cold / warm, `off` with every page touched", cacheCold, "cache/Warm1184/off-touch", "ns/op"),
	ratioRow("`impl/cache` cold / warm, `on-first-use`", cacheCold, "cache/Warm1184/on-first-use", "ns/op"),
	ratioRow("`impl/cache` cold / warm, `on-load`", cacheCold, "cache/Warm1184/on-load", "ns/op"),
	{figure: "`impl/cache` warm load core (open, initialize, 1,184 look-ups): CPU time, v2 / v3", value: func(r benchFields) (string, error) {
		v2, err := r.in("cache/WarmLoadCore1184/v2", "cpu-ns/op")
		if err != nil {
			return "", err
		}
		v3, err := r.in("cache/WarmLoadCore1184/v3", "cpu-ns/op")
		return fmt.Sprintf("%.2f / %.2f ms", v2/1e6, v3/1e6), err
	}},
	ratioRow("`impl/cache` over a 64 MiB mapped file: XXH3 / a read sweep", "cache/ChecksumMappedFile/xxh3", "cache/ChecksumMappedFile/sweep", "MB/s"),
	ratioRow("`impl/cache` CRC32C / a read sweep (why v3's data checksum is XXH3)", "cache/ChecksumMappedFile/crc32c", "cache/ChecksumMappedFile/sweep", "MB/s"),
	ratioRow("`impl/runtime` small preset: cold init / warm init", "runtime/Launch/small/cold", "runtime/Launch/small/warm", "init-ms/op"),
	spanRow("`impl/runtime` 64 MiB program, first output: prefault / plain (on-compute, off)", `^runtime/WarmFirstOutput/prefault-alternated/`, "prefault/plain", "%.2f"),
	spanRow("`impl/runtime` first output: verify-ahead / prefault (on-compute)", `^runtime/WarmFirstOutput/prefault-alternated/on-compute$`, "ahead/prefault", "%.2f"),
	func() benchGoal {
		re := `^explore/Explore$`
		g := spanRow("`model/explore` reference at depth 12: states per CPU-second", re, "states/cpu-s", "%.0f")
		g.goal, g.met = "≥ 500,000", atLeast(re, "states/cpu-s", 500000)
		return g
	}(),
	spanRow("`model/explore` states per second, wall-clock", `^explore/Explore$`, "states/s", "%.0f"),
}

// renderGoBenchTable is the generated package-benchmark part of
// benchmarks.md.
func renderGoBenchTable(out []byte, note string) (string, error) {
	r, cpus, err := parseGoBench(string(out))
	if err != nil {
		return "", fmt.Errorf("%s: %w", goBenchResults, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From `docs/%s`, the output of the run below; `docs/%s` is its note:\n\n", goBenchResults, goBenchRunNote)
	sc := bufio.NewScanner(strings.NewReader(note))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ": "); ok {
			fmt.Fprintf(&b, "- %s: %s\n", k, v)
		}
	}
	fmt.Fprintf(&b, "- cpu, as go test names it: %s\n\n", strings.Join(cpus, "; "))
	if err := writeGoals(&b, r, goBenchRows); err != nil {
		return "", err
	}
	return b.String(), nil
}

// TestGoBenchTable: benchmarks.md's package-benchmark table is the one the
// committed go test -bench output gives.
func TestGoBenchTable(t *testing.T) {
	out, err := os.ReadFile(goBenchResults)
	if err != nil {
		t.Fatal(err)
	}
	note := readPage(t, goBenchRunNote)
	for _, k := range []string{"command", "commit", "date", "load"} {
		if !strings.Contains(note, k+": ") {
			t.Errorf("%s does not say the run's %s", goBenchRunNote, k)
		}
	}
	want, err := renderGoBenchTable(out, note)
	if err != nil {
		t.Fatal(err)
	}
	syncGenerated(t, "benchmarks.md", "go bench results", "GoBenchTable", want)
}

// A benchmark renamed or missing from the output fails the table instead
// of dropping its row.
func TestGoBenchTableNeedsItsBenchmarks(t *testing.T) {
	out, err := os.ReadFile(goBenchResults)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "BenchmarkCold1184") {
			kept = append(kept, l)
		}
	}
	if _, err := renderGoBenchTable([]byte(strings.Join(kept, "\n")), ""); err == nil || !strings.Contains(err.Error(), "Cold1184") {
		t.Errorf("without BenchmarkCold1184: %v", err)
	}
	if _, _, err := parseGoBench("goos: linux\n"); err == nil {
		t.Error("output with no benchmark line parsed")
	}
}
