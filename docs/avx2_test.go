package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchmarks.md quotes the medians of four `simrun bench` runs on the
// kernels' AVX2 path; the runs' results are committed as they came
// (testdata/bench/avx2/run*.json, avx2.run says how), and the medians are
// computed again here.
const avx2Runs = "testdata/bench/avx2"

// avx2Figures renders what benchmarks.md quotes of the AVX2 runs.
func avx2Figures() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(avx2Runs, "run*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no runs in %s", avx2Runs)
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
		if simd, _ := r["simd"].(string); simd != "avx2-fma" {
			return nil, fmt.Errorf("%s: simd %q, not the AVX2 path", f, simd)
		}
		for _, k := range fields {
			v, err := r.num(k)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			vals[k] = append(vals[k], v)
		}
	}
	m := func(k string) float64 { return medianOf(vals[k]) }
	return []string{
		fmt.Sprintf("%d runs on the AVX2 path", len(files)),
		fmt.Sprintf("cold / limit %.2f, pack / copy %.2f, first output / steady %.2f, / off %.2f",
			m("cold_to_limit"), m("pack_to_copy_ratio"), m("warm_first_output_to_steady_run"), m("warm_first_output_to_off")),
	}, nil
}

// TestAVX2FiguresCurrent: benchmarks.md quotes the committed AVX2 runs'
// medians, and the run note says how they were made.
func TestAVX2FiguresCurrent(t *testing.T) {
	checkRunNote(t, filepath.Join(avx2Runs, "avx2.run"))
	figs, err := avx2Figures()
	if err != nil {
		t.Fatal(err)
	}
	checkQuoted(t, "benchmarks.md", figs, avx2Runs)
}
