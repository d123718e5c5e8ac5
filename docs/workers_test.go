package docs

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// model.md's figures for `--workers 2` are computed again here from the
// records of the run that measured them, committed as they came
// (testdata/explore/workers.txt: per round, one worker, two workers, and
// two independent one-worker runs at once), so a new run, or an edited
// figure, cannot leave the page and the records apart. workers.run says
// how they were made.
const (
	workersRecords = "testdata/explore/workers.txt"
	workersRunNote = "testdata/explore/workers.run"
)

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

// workersFigures renders the figures model.md quotes, as it quotes them.
func workersFigures() ([]string, error) {
	rounds, err := recordFields(workersRecords, "round ", "states", "ratio", "summed")
	if err != nil {
		return nil, err
	}
	states := rounds[0]["states"]
	for _, r := range rounds {
		if r["states"] != states {
			return nil, fmt.Errorf("records of %v and %v states: not one workload", states, r["states"])
		}
	}
	ratios := column(rounds, "ratio")
	cpus, err := cpuRatios(workersRecords)
	if err != nil {
		return nil, err
	}
	sums := column(rounds, "summed")
	shares := make([]float64, len(rounds))
	for i := range rounds {
		shares[i] = ratios[i] / sums[i]
	}
	rlo, rhi := spread(ratios)
	clo, chi := spread(cpus)
	slo, shi := spread(sums)
	hlo, hhi := spread(shares)
	return []string{
		fmt.Sprintf("(%s states, exhausted)", commas(int(states))),
		fmt.Sprintf("%d quiet rounds", len(rounds)),
		fmt.Sprintf("w1/w2 of median **%.2f** (%.2f–%.2f)", medianOf(ratios), rlo, rhi),
		fmt.Sprintf("%.2f–%.2f× one worker's CPU", clo, chi),
		fmt.Sprintf("%.2f× one alone (median; %.2f–%.2f)", medianOf(sums), slo, shi),
		fmt.Sprintf("%.2f of that ceiling (%.2f–%.2f)", medianOf(shares), hlo, hhi),
	}, nil
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
// committed runs, and the run note says how they were made.
func TestWorkersFiguresCurrent(t *testing.T) {
	checkRunNote(t, workersRunNote)
	figs, err := workersFigures()
	if err != nil {
		t.Fatal(err)
	}
	checkQuoted(t, "model.md", figs, workersRecords)
}
