package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// model.md's `--names 2` row quotes one run too long for a test (about
// nine minutes on two cores); its output and timing are committed as they
// came (testdata/explore/names2.json, names2.time; names2.run says how),
// and the row's figures are computed again here from them.
const (
	names2Result  = "testdata/explore/names2.json"
	names2Time    = "testdata/explore/names2.time"
	names2RunNote = "testdata/explore/names2.run"
)

// names2Figures renders the row's figures, as the row quotes them.
func names2Figures() ([]string, error) {
	b, err := os.ReadFile(names2Result)
	if err != nil {
		return nil, err
	}
	var r struct {
		States, Transitions, Depth int
		Seconds                    float64
		Exhausted                  bool
		PerState                   float64 `json:"resident_bytes_per_state"`
		Liveness                   struct {
			Checked    bool
			Seconds    float64
			Violations []json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", names2Result, err)
	}
	if !r.Exhausted || !r.Liveness.Checked || len(r.Liveness.Violations) != 0 {
		return nil, fmt.Errorf("%s: not an exhausted run with liveness checked and no lasso", names2Result)
	}
	t, err := os.ReadFile(names2Time)
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([0-9]+):([0-9.]+)\n`).FindSubmatch(t)
	if m == nil {
		return nil, fmt.Errorf("%s: no m:ss wall clock time", names2Time)
	}
	mins, err := strconv.Atoi(string(m[1]))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", names2Time, err)
	}
	sec, err := strconv.ParseFloat(string(m[2]), 64)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", names2Time, err)
	}
	return []string{fmt.Sprintf("| `ExhaustiveBounds`, 2 names | %s | %s | %d, exhausted, no lasso (search %.0f s, liveness %.0f s, %.0f s wall; %.1f B/state) |",
		commas(r.States), commas(r.Transitions), r.Depth, r.Seconds, r.Liveness.Seconds, float64(mins)*60+sec, r.PerState)}, nil
}

// TestNames2FiguresCurrent: model.md's `--names 2` row quotes the
// committed run, and the run note says how it was made.
func TestNames2FiguresCurrent(t *testing.T) {
	checkRunNote(t, names2RunNote)
	figs, err := names2Figures()
	if err != nil {
		t.Fatal(err)
	}
	checkQuoted(t, "model.md", figs, names2Result, names2Time)
}
