package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchmarks.md quotes the medians of sets of four `simrun bench` runs, each
// set on one machine and one SIMD path; the runs' results are committed as
// they came (testdata/bench/SET/run*.json, with a note saying how), and the
// medians are computed again here.
type benchRunSet struct {
	dir, note string
	simd      string // the kernels' path every run must report
	cpu       string // what every run's cpu must contain
	label     string // how the page names the set
	core      bool   // the page quotes the warm load core's v3 / v2 too
}

var benchRunSets = []benchRunSet{
	{dir: "testdata/bench/avx2", note: "avx2.run", simd: "avx2-fma", cpu: "AMD EPYC", label: "on the AVX2 path"},
	{dir: "testdata/bench/xeon", note: "xeon.run", simd: "avx512f", cpu: "Xeon", label: "on an Intel Xeon", core: true},
	{dir: "testdata/bench/xeon-avx2", note: "xeon-avx2.run", simd: "avx2-fma", cpu: "Xeon", label: "on its AVX2 path"},
}

// figures renders what benchmarks.md quotes of the set.
func (s benchRunSet) figures() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(s.dir, "run*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no runs in %s", s.dir)
	}
	fields := []string{"cold_to_limit", "pack_to_copy_ratio", "warm_first_output_to_steady_run", "warm_first_output_to_off"}
	vals := map[string][]float64{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r benchFields
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if simd, _ := r["simd"].(string); simd != s.simd {
			return nil, fmt.Errorf("%s: simd %q, not %s", f, simd, s.simd)
		}
		if cpu, _ := r["cpu"].(string); !strings.Contains(cpu, s.cpu) {
			return nil, fmt.Errorf("%s: cpu %q, not %s", f, cpu, s.cpu)
		}
		for _, k := range fields {
			v, err := r.num(k)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			vals[k] = append(vals[k], v)
		}
		if s.core {
			v2, err := r.in("warm_load_core_ms", "v2")
			if err == nil && v2 <= 0 {
				err = fmt.Errorf("warm_load_core_ms v2 is %v", v2)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			v3, err := r.in("warm_load_core_ms", "v3")
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			vals["core"] = append(vals["core"], v3/v2)
		}
	}
	m := func(k string) float64 { return medianOf(vals[k]) }
	figs := []string{
		fmt.Sprintf("%d runs %s", len(files), s.label),
		fmt.Sprintf("cold / limit %.2f, pack / copy %.2f, first output / steady %.2f, / off %.2f",
			m("cold_to_limit"), m("pack_to_copy_ratio"), m("warm_first_output_to_steady_run"), m("warm_first_output_to_off")),
	}
	if s.core {
		lo, hi := spread(vals["core"])
		figs = append(figs, fmt.Sprintf("warm load core v3 / v2 %.2f (%.2f–%.2f)", m("core"), lo, hi))
	}
	return figs, nil
}

// TestBenchRunSetsCurrent: benchmarks.md quotes each committed set's
// medians, and each run note says how they were made.
func TestBenchRunSetsCurrent(t *testing.T) {
	for _, s := range benchRunSets {
		t.Run(filepath.Base(s.dir), func(t *testing.T) {
			checkRunNote(t, filepath.Join(s.dir, s.note))
			figs, err := s.figures()
			if err != nil {
				t.Fatal(err)
			}
			checkQuoted(t, "benchmarks.md", figs, s.dir)
		})
	}
}
