package docs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// benchmarks.md compares xpwc's warm load with ExecuTorch's own loader,
// timed outside this repository (its code is not ours to commit). The run's
// records are committed as they came, and the page's figures are computed
// again here from them, so a new run, or an edited figure, cannot leave the
// page and the records apart.
// One run a machine: its records and its note.
var etRuns = []struct{ records, note string }{
	{"testdata/bench/executorch.txt", "testdata/bench/executorch.run"},
	{"testdata/bench/executorch-xeon.txt", "testdata/bench/executorch-xeon.run"},
}

// etRun is the records of one run: its cycles, each one process of each of
// its tags in a shuffled order. A run may hold two kinds of cycle, the
// loaders' cores and the launches, so that no core runs right after a
// launch (a process then pays for the memory the launch freed).
type etRun struct {
	cycles []map[string]map[string]float64
}

// readETRun parses the records: "load L" opens a cycle, "TAG {json}" is one
// process's figures.
func readETRun(name string) (etRun, error) {
	f, err := os.Open(name)
	if err != nil {
		return etRun{}, err
	}
	defer f.Close()
	var r etRun
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		tag, rec, _ := strings.Cut(sc.Text(), " ")
		if tag == "load" {
			r.cycles = append(r.cycles, map[string]map[string]float64{})
			continue
		}
		if len(r.cycles) == 0 {
			return etRun{}, fmt.Errorf("%s:%d: a record before the first cycle", name, n)
		}
		var v map[string]float64
		if err := json.Unmarshal([]byte(rec), &v); err != nil {
			return etRun{}, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		r.cycles[len(r.cycles)-1][tag] = v
	}
	return r, sc.Err()
}

// median is the median of tag's field over the cycles that also ran a
// beside process: ExecuTorch's core is compared with the cycles of xpwc's
// cores, its whole warm start with those of the launches.
func (r etRun) median(tag, field, beside string) (float64, error) {
	var v []float64
	for _, c := range r.cycles {
		rec, ok := c[tag]
		if _, with := c[beside]; !ok || !with {
			continue
		}
		x, ok := rec[field]
		if !ok {
			return 0, fmt.Errorf("a %s record without %s", tag, field)
		}
		v = append(v, x)
	}
	if len(v) == 0 {
		return 0, fmt.Errorf("no %s records beside %s", tag, beside)
	}
	return medianOf(v), nil
}

// count is the number of cycles that ran all of tags.
func (r etRun) count(tags ...string) int {
	n := 0
	for _, c := range r.cycles {
		all := true
		for _, tag := range tags {
			_, ok := c[tag]
			all = all && ok
		}
		if all {
			n++
		}
	}
	return n
}

// pairedMedian is the median over the cycles of a's field over b's: a ratio
// of processes run side by side, which the machine's drift does not move.
// withET says whether the cycles counted are those with ExecuTorch's
// loader or those without it (xpwc's cores alone).
func (r etRun) pairedMedian(a, b, field string, withET bool) (float64, error) {
	var v []float64
	for _, c := range r.cycles {
		if _, et := c["et"]; et != withET {
			continue
		}
		x, okA := c[a][field]
		y, okB := c[b][field]
		if okA && okB && y > 0 {
			v = append(v, x/y)
		}
	}
	if len(v) == 0 {
		return 0, fmt.Errorf("no cycle with both %s and %s", a, b)
	}
	return medianOf(v), nil
}

func medianOf(v []float64) float64 {
	v = slices.Sorted(slices.Values(v))
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// etFigures renders the figures benchmarks.md quotes, as it quotes them.
func etFigures(r etRun) ([]string, error) {
	var errs []error
	med := func(tag, field, beside string) float64 {
		m, err := r.median(tag, field, beside)
		errs = append(errs, err)
		return m
	}
	paired := func(a, b, field string) float64 {
		m, err := r.pairedMedian(a, b, field, true)
		errs = append(errs, err)
		return m
	}
	etCore, etWhole := med("et", "core_cpu_ms", "core-v2"), med("et", "whole_cpu_ms", "launch-v2")
	v2, v3 := med("core-v2", "core_cpu_ms", "et"), med("core-v3", "core_cpu_ms", "et")
	l2, l3 := med("launch-v2", "init_cpu_ms", "et"), med("launch-v3", "init_cpu_ms", "et")
	v3v2 := paired("core-v3", "core-v2", "core_cpu_ms")
	alone := r.count("core-v2") - r.count("et", "core-v2")
	cycles := fmt.Sprintf("%d cycles", len(r.cycles))
	if cores, launches := r.count("et", "core-v2"), r.count("launch-v2"); alone+cores+launches == len(r.cycles) {
		cycles = fmt.Sprintf("%d cycles of the cores, then %d of the launches", cores, launches)
	}
	figs := []string{
		cycles,
		fmt.Sprintf("ExecuTorch's core %.2f ms", etCore),
		fmt.Sprintf("xpwc **v2 %.2f×, v3 %.2f×**", v2/etCore, v3/etCore),
		fmt.Sprintf("v3 / v2 in a cycle %.2f", v3v2),
		fmt.Sprintf("its whole warm start %.2f ms", etWhole),
		fmt.Sprintf("`init_cpu_ms` **v2 %.2f×, v3 %.2f×**", l2/etWhole, l3/etWhole),
	}
	if _, err := r.median("et", "core_proc_cpu_ms", "core-v2"); err == nil {
		// The process's CPU (getrusage), where *_cpu_ms is the timed
		// thread's: xpwc's has Go's runtime threads beside it.
		etProc := med("et", "core_proc_cpu_ms", "core-v2")
		a := fmt.Sprintf("%.2f", med("core-v2", "core_proc_cpu_ms", "et")/etProc)
		if b := fmt.Sprintf("%.2f", med("core-v3", "core_proc_cpu_ms", "et")/etProc); b != a {
			a += "–" + b
		}
		figs = append(figs, "the process takes "+a+"×")
	}
	if alone > 0 {
		// ExecuTorch's loader reads the v2 file's index in each of its
		// cycles, where xpwc's v2 core finds it in the CPU's caches.
		m, err := r.pairedMedian("core-v3", "core-v2", "core_cpu_ms", false)
		errs = append(errs, err)
		figs = append(figs, fmt.Sprintf("%d cycles of xpwc's two cores alone: v3 / v2 %.2f", alone, m))
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return figs, nil
}

// TestExecuTorchFiguresCurrent: benchmarks.md's ExecuTorch paragraph
// quotes each committed run's medians, and each run note says how it was
// made.
func TestExecuTorchFiguresCurrent(t *testing.T) {
	for _, run := range etRuns {
		t.Run(run.records, func(t *testing.T) {
			checkRunNote(t, run.note)
			r, err := readETRun(run.records)
			if err != nil {
				t.Fatal(err)
			}
			figs, err := etFigures(r)
			if err != nil {
				t.Fatal(err)
			}
			checkQuoted(t, "benchmarks.md", figs, run.records)
		})
	}
}

// A record without a figure the page quotes fails instead of counting as 0.
func TestExecuTorchFiguresNeedTheirFields(t *testing.T) {
	r := etRunOf(t, "load 0.5\net {\"core_cpu_ms\":2}\ncore-v2 {\"core_cpu_ms\":1}\ncore-v3 {\"core_cpu_ms\":1}\n"+
		"launch-v2 {\"init_cpu_ms\":3}\nlaunch-v3 {\"init_cpu_ms\":3}\n")
	if _, err := etFigures(r); err == nil || !strings.Contains(err.Error(), "whole_cpu_ms") {
		t.Errorf("without whole_cpu_ms: %v", err)
	}
}

// A run in phases compares ExecuTorch's core with its processes beside
// xpwc's cores and its whole warm start with those beside the launches,
// says how many cycles each phase had, and gives v3 / v2 of the cycles of
// xpwc's cores alone apart.
func TestExecuTorchPhasesKeptApart(t *testing.T) {
	r := etRunOf(t, "load 0.5\ncore-v2 {\"core_cpu_ms\":4}\ncore-v3 {\"core_cpu_ms\":2}\n"+
		"load 0.5\ncore-v2 {\"core_cpu_ms\":4}\ncore-v3 {\"core_cpu_ms\":2}\n"+
		"load 0.5\net {\"core_cpu_ms\":1,\"whole_cpu_ms\":3}\ncore-v2 {\"core_cpu_ms\":1}\ncore-v3 {\"core_cpu_ms\":1}\n"+
		"load 0.5\net {\"core_cpu_ms\":2,\"whole_cpu_ms\":3}\ncore-v2 {\"core_cpu_ms\":2}\ncore-v3 {\"core_cpu_ms\":2}\n"+
		"load 0.5\net {\"core_cpu_ms\":9,\"whole_cpu_ms\":4}\nlaunch-v2 {\"init_cpu_ms\":2}\nlaunch-v3 {\"init_cpu_ms\":2}\n")
	figs, err := etFigures(r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"2 cycles of the cores, then 1 of the launches", "ExecuTorch's core 1.50 ms", "xpwc **v2 1.00×, v3 1.00×**",
		"v3 / v2 in a cycle 1.00", "its whole warm start 4.00 ms", "`init_cpu_ms` **v2 0.50×, v3 0.50×**",
		"2 cycles of xpwc's two cores alone: v3 / v2 0.50",
	}
	assert.Equal(t, want, figs)
}

// etRunOf reads recs, records as a run's file holds them.
func etRunOf(t *testing.T, recs string) etRun {
	t.Helper()
	name := t.TempDir() + "/r.txt"
	if err := os.WriteFile(name, []byte(recs), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := readETRun(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkRunNote fails t unless the run note name says each of what a reader
// needs to repeat the run: its command, commit, date, machine and load.
func checkRunNote(t *testing.T, name string) {
	t.Helper()
	note := readPage(t, name)
	for _, k := range []string{"command", "commit", "date", "machine", "load"} {
		if !strings.Contains(note, k+": ") {
			t.Errorf("%s does not say the run's %s", name, k)
		}
	}
}

// checkQuoted fails t for each of figs (figures computed from records)
// that page does not say, whatever its line breaks.
func checkQuoted(t *testing.T, page string, figs []string, records ...string) {
	t.Helper()
	text := strings.Join(strings.Fields(readPage(t, page)), " ")
	for _, f := range figs {
		if !strings.Contains(text, f) {
			t.Errorf("%s does not say %q (computed from %s)", page, f, strings.Join(records, ", "))
		}
	}
}
