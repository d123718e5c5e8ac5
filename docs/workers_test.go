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

// model.md's figures for `--workers 2` are computed again here from the
// records of the runs that measured them, one run a machine, committed as
// they came (testdata/explore/workers*.txt: per round, one worker, two
// workers, and two independent one-worker runs at once), so a new run, or an
// edited figure, cannot leave the page and the records apart. Each record's
// .run note says how it was made.
var workersRuns = []struct{ records, note, machine string }{
	{"testdata/explore/workers-xeon.txt", "testdata/explore/workers-xeon.run", "an Intel Xeon"},
	{"testdata/explore/workers.txt", "testdata/explore/workers.run", "an AMD EPYC (before the merging worker)"},
}

// recordFields reads, from each line of name that starts with prefix, the
// number after each of keys ("key 1.23" or "key=123"); a line that lacks
// one is an error, so a changed record format fails instead of reading 0.
func recordFields(name, prefix string, keys ...string) ([]map[string]float64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := map[string]*regexp.Regexp{}
	for _, k := range keys {
		res[k] = regexp.MustCompile(`(?:^|[ |])` + regexp.QuoteMeta(k) + `[ =]([0-9.]+)`)
	}
	var recs []map[string]float64
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		rec := map[string]float64{}
		for _, k := range keys {
			m := res[k].FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("%s:%d: no %q", name, n, k)
			}
			if rec[k], err = strconv.ParseFloat(m[1], 64); err != nil {
				return nil, fmt.Errorf("%s:%d: %q: %w", name, n, k, err)
			}
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 && sc.Err() == nil {
		return nil, fmt.Errorf("%s: no %q records", name, prefix)
	}
	return recs, sc.Err()
}

func column(recs []map[string]float64, k string) []float64 {
	v := make([]float64, len(recs))
	for i, r := range recs {
		v[i] = r[k]
	}
	return v
}

func spread(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// workersFigures renders the figures model.md quotes of one machine's
// rounds, as it quotes them, and the rounds' count and states.
func workersFigures(records, machine string) (figs []string, rounds int, states float64, err error) {
	recs, err := recordFields(records, "round ", "states", "ratio", "summed")
	if err != nil {
		return nil, 0, 0, err
	}
	states = recs[0]["states"]
	for _, r := range recs {
		if r["states"] != states {
			return nil, 0, 0, fmt.Errorf("%s: records of %v and %v states: not one workload", records, states, r["states"])
		}
	}
	ratios := column(recs, "ratio")
	cpus, err := cpuRatios(records)
	if err != nil {
		return nil, 0, 0, err
	}
	sums := column(recs, "summed")
	shares := make([]float64, len(recs))
	for i := range recs {
		shares[i] = ratios[i] / sums[i]
	}
	rlo, rhi := spread(ratios)
	clo, chi := spread(cpus)
	slo, shi := spread(sums)
	hlo, hhi := spread(shares)
	return []string{fmt.Sprintf("w1/w2 median **%.2f** (%.2f–%.2f) on %s, at %.2f–%.2f× one worker's CPU; "+
		"the pair %.2f× one alone (median; %.2f–%.2f), two workers %.2f of that (%.2f–%.2f)",
		medianOf(ratios), rlo, rhi, machine, clo, chi, medianOf(sums), slo, shi, medianOf(shares), hlo, hhi)}, len(recs), states, nil
}

// cpuRatios reads the last "cpu X" of each pair's line: two workers' CPU
// over one worker's.
func cpuRatios(name string) ([]float64, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`ratio [0-9.]+ cpu ([0-9.]+)`)
	var v []float64
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "round ") {
			continue
		}
		m := re.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s: a pair without its CPU ratio: %q", name, line)
		}
		x, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return nil, err
		}
		v = append(v, x)
	}
	return v, nil
}

// commas writes n with thousands separators, as the docs do.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestWorkersFiguresCurrent: model.md's workers paragraph quotes the
// committed runs of every machine, one workload, and the run notes say how
// they were made.
func TestWorkersFiguresCurrent(t *testing.T) {
	var figs []string
	var counts []string
	var states float64
	for i, r := range workersRuns {
		checkRunNote(t, r.note)
		f, n, s, err := workersFigures(r.records, r.machine)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && s != states {
			t.Fatalf("%s explored %v states, %s %v: not one workload", r.records, s, workersRuns[0].records, states)
		}
		states = s
		figs = append(figs, f...)
		counts = append(counts, strconv.Itoa(n))
	}
	rounds := strings.Join(counts, " and ")
	if len(slices.Compact(slices.Clone(counts))) == 1 {
		rounds = counts[0]
	}
	figs = append(figs, fmt.Sprintf("(%s states, exhausted)", commas(int(states))),
		fmt.Sprintf("%s quiet rounds on each machine", rounds))
	checkQuoted(t, "model.md", figs, "testdata/explore/workers*.txt")
}
