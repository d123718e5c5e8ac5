package docs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// The table at the top of benchmarks.md is generated from the results file
// the run that measured it wrote (`simrun bench --json` output, committed
// as it came) and the note of that run beside it (command, commit, date,
// machine, load), so the page's current figures are the run's and nothing
// else. A new run replaces both files; then
//
//	go test ./docs -run BenchTable -update

const (
	benchResults = "testdata/bench/llama-1184.json"
	benchRunNote = "testdata/bench/llama-1184.run"
)

// benchGoal is one row of the table: a figure of the results, how it is
// shown, and the goal it is held to ("" when it has none).
type benchGoal struct {
	figure string
	value  func(r benchFields) (string, error)
	goal   string
	met    func(r benchFields) (bool, error)
}

// benchFields reads fields of a results file by their JSON names, failing
// on a field the file lacks (a renamed field must fail here, not show 0).
type benchFields map[string]any

func (r benchFields) num(name string) (float64, error) {
	v, ok := r[name].(float64)
	if !ok {
		return 0, fmt.Errorf("the results have no number %q", name)
	}
	return v, nil
}

func (r benchFields) in(name, key string) (float64, error) {
	m, ok := r[name].(map[string]any)
	if !ok {
		return 0, fmt.Errorf("the results have no map %q", name)
	}
	v, ok := m[key].(float64)
	if !ok {
		return 0, fmt.Errorf("the results have no %q in %q", key, name)
	}
	return v, nil
}

// msOf shows the milliseconds of several keys of a map, in order.
func (r benchFields) msOf(name string, keys ...string) (string, error) {
	s := make([]string, len(keys))
	for i, k := range keys {
		v, err := r.in(name, k)
		if err != nil {
			return "", err
		}
		s[i] = fmt.Sprintf("%.1f", v)
	}
	return strings.Join(s, " / ") + " ms", nil
}

// nums reads several numbers at once.
func (r benchFields) nums(names ...string) ([]float64, error) {
	out := make([]float64, len(names))
	for i, n := range names {
		v, err := r.num(n)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func ms(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.2g ms", v)
}

var benchGoals = []benchGoal{
	{"cold init (`cold_ms`) = read + pack + commit + other", func(r benchFields) (string, error) {
		v, err := r.nums("cold_ms", "cold_read_ms", "cold_pack_ms", "cold_commit_ms", "cold_other_ms")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s = %.0f + %.0f + %.0f + %.0f", ms(v[0]), v[1], v[2], v[3], v[4]), nil
	}, "", nil},
	{"cold init / the same bytes read, packed and written to one new file (`cold_to_limit`)", func(r benchFields) (string, error) {
		v, err := r.nums("cold_to_limit", "cold_limit_ms")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("**%.2f** (limit %s)", v[0], ms(v[1])), nil
	}, "≤ 1.25", func(r benchFields) (bool, error) { v, err := r.num("cold_to_limit"); return v <= 1.25, err }},
	{"packing / copy bandwidth (`pack_to_copy_ratio`)", func(r benchFields) (string, error) {
		v, err := r.nums("pack_to_copy_ratio", "pack_gbps", "copy_gbps")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("**%.2f** (%.1f / %.1f GB/s)", v[0], v[1], v[2]), nil
	}, "≥ 0.6", func(r benchFields) (bool, error) { v, err := r.num("pack_to_copy_ratio"); return v >= 0.6, err }},
	{"warm load core, v2 / v3 (`warm_load_core_ms`: open, initialize, every look-up)", func(r benchFields) (string, error) {
		return r.msOf("warm_load_core_ms", "v2", "v3")
	}, "", nil},
	{"warm init, default policy (`warm_ms`); cold / warm", func(r benchFields) (string, error) {
		v, err := r.nums("warm_ms", "warm_speedup")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s; **%.0f×**", ms(v[0]), v[1]), nil
	}, "≥ 300×", func(r benchFields) (bool, error) { v, err := r.num("warm_speedup"); return v >= 300, err }},
	{"warm first output / steady inference (`warm_first_output_to_steady_run`)", func(r benchFields) (string, error) {
		v, err := r.nums("warm_first_output_to_steady_run", "warm_steady_run_ms")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("**%.2f** (steady %s)", v[0], ms(v[1])), nil
	}, "≤ 2 (stretch 1.5)", func(r benchFields) (bool, error) {
		v, err := r.num("warm_first_output_to_steady_run")
		return v <= 2, err
	}},
	{"warm first output, default policy / off (`warm_first_output_to_off`)", func(r benchFields) (string, error) {
		v, err := r.num("warm_first_output_to_off")
		return fmt.Sprintf("**%.2f**", v), err
	}, "≤ 1.25", func(r benchFields) (bool, error) { v, err := r.num("warm_first_output_to_off"); return v <= 1.25, err }},
	{"XXH3 over the mapped file / a read sweep (`checksum_to_sweep`)", func(r benchFields) (string, error) {
		v, err := r.num("checksum_to_sweep")
		return fmt.Sprintf("**%.2f**", v), err
	}, "≥ 0.70", func(r benchFields) (bool, error) { v, err := r.num("checksum_to_sweep"); return v >= 0.70, err }},
	{"dirty bytes of the mappings after a cold / a warm launch, of packed bytes", func(r benchFields) (string, error) {
		v, err := r.nums("dirty_bytes_file_mode", "dirty_bytes_file_mode_warm", "packed_bytes")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%.0f / %.0f bytes of %.0f", v[0], v[1], v[2]), nil
	}, "≤ 1%", func(r benchFields) (bool, error) {
		v, err := r.nums("dirty_bytes_file_mode", "dirty_bytes_file_mode_warm", "packed_bytes")
		return err == nil && v[0] <= v[2]/100 && v[1] <= v[2]/100, err
	}},
	{"file growth over the warm relaunches (`growth_bytes_100_relaunches`)", func(r benchFields) (string, error) {
		v, err := r.nums("growth_bytes_100_relaunches", "relaunches")
		return fmt.Sprintf("%.0f bytes over %.0f", v[0], v[1]), err
	}, "0", func(r benchFields) (bool, error) { v, err := r.num("growth_bytes_100_relaunches"); return v == 0, err }},
	{"kernel upgrade: misses of the launch after it (`upgrade_next_misses`)", func(r benchFields) (string, error) {
		v, err := r.num("upgrade_next_misses")
		return fmt.Sprintf("%.0f", v), err
	}, "0", func(r benchFields) (bool, error) { v, err := r.num("upgrade_next_misses"); return v == 0, err }},
	{"warm first output by policy: on-compute / on-first-use / on-load / off", func(r benchFields) (string, error) {
		return r.msOf("warm_first_output_ms_by_policy", "on-compute", "on-first-use", "on-load", "off")
	}, "", nil},
	{"first output by prefault walk: none / populate / verify-ahead", func(r benchFields) (string, error) {
		return r.msOf("warm_first_output_ms_by_prefault", "none", "populate", "verify-ahead")
	}, "", nil},
	{"cold init, staged / mapped writes; next warm first output, staged / mapped", func(r benchFields) (string, error) {
		cs, err1 := r.in("cold_ms_by_writes", "staged")
		cm, err2 := r.in("cold_ms_by_writes", "mapped")
		ws, err3 := r.in("warm_first_output_ms_by_writes", "staged")
		wm, err4 := r.in("warm_first_output_ms_by_writes", "mapped")
		for _, err := range []error{err1, err2, err3, err4} {
			if err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("%.2f; %.2f", cs/cm, ws/wm), nil
	}, "", nil},
	{"heap packing without a file (`heap_ms`); look-up on a loaded cache (`lookup_ns`)", func(r benchFields) (string, error) {
		v, err := r.nums("heap_ms", "lookup_ns")
		return fmt.Sprintf("%s; %.0f ns", ms(v[0]), v[1]), err
	}, "", nil},
}

// renderBenchTable is the generated part of benchmarks.md.
func renderBenchTable(results []byte, note string) (string, error) {
	var r benchFields
	if err := json.Unmarshal(results, &r); err != nil {
		return "", fmt.Errorf("%s: %w", benchResults, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From `docs/%s`, written by the run below; `docs/%s` is its note:\n\n", benchResults, benchRunNote)
	sc := bufio.NewScanner(strings.NewReader(note))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ": "); ok {
			fmt.Fprintf(&b, "- %s: %s\n", k, v)
		}
	}
	preset, _ := r["preset"].(string)
	layers, err := r.nums("layers", "packed_bytes", "runs")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "\nPreset %s: %.0f layers, %.0f packed bytes; each figure the median of %.0f launches.\n\n", preset, layers[0], layers[1], layers[2])
	if err := writeGoals(&b, r, benchGoals); err != nil {
		return "", err
	}
	return b.String(), nil
}

// writeGoals writes the table of goals as figures of r: each figure, its
// value in this run, its goal and whether it was met.
func writeGoals(b *strings.Builder, r benchFields, goals []benchGoal) error {
	b.WriteString("| figure | this run | goal | met |\n|---|---|---|---|\n")
	for _, g := range goals {
		v, err := g.value(r)
		if err != nil {
			return fmt.Errorf("%s: %w", g.figure, err)
		}
		met := ""
		if g.met != nil {
			ok, err := g.met(r)
			if err != nil {
				return fmt.Errorf("%s: %w", g.figure, err)
			}
			met = map[bool]string{true: "yes", false: "**no**"}[ok]
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", g.figure, v, g.goal, met)
	}
	return nil
}

// TestBenchTable: benchmarks.md's current table is the one the results
// file gives, and the run note says how it was made.
func TestBenchTable(t *testing.T) {
	results, err := os.ReadFile(benchResults)
	if err != nil {
		t.Fatal(err)
	}
	checkRunNote(t, benchRunNote)
	note := readPage(t, benchRunNote)
	want, err := renderBenchTable(results, note)
	if err != nil {
		t.Fatal(err)
	}
	syncGenerated(t, "benchmarks.md", "bench results", "BenchTable", want)
}

// A renamed or missing field fails the table instead of showing zero.
func TestBenchTableNeedsItsFields(t *testing.T) {
	results, err := os.ReadFile(benchResults)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(results, &r); err != nil {
		t.Fatal(err)
	}
	delete(r, "checksum_to_sweep")
	b, _ := json.Marshal(r)
	if _, err := renderBenchTable(b, ""); err == nil || !strings.Contains(err.Error(), "checksum_to_sweep") {
		t.Errorf("without checksum_to_sweep: %v", err)
	}
}
