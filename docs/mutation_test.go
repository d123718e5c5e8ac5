package docs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// mutationCounts are a mutation table row's counts after any "by hand"
// step ("a → b" reads b).
type mutationCounts struct{ killed, lived, timedOut, notCovered int }

func (c mutationCounts) String() string {
	return fmt.Sprintf("%d/%d/%d/%d", c.killed, c.lived, c.timedOut, c.notCovered)
}

// mutationRow is one row of a mutation table in mutation.md: its counts
// and the percentages quoted.
type mutationRow struct {
	name string
	mutationCounts
	efficacy, coverage float64
	total              bool // a bold row: the table's sum
}

// mutationCount reads a count cell, "12" or "12 → 14" (the last number).
func mutationCount(cell string) (int, error) {
	f := strings.Fields(strings.Trim(strings.TrimSpace(cell), "*"))
	if len(f) == 0 {
		return 0, fmt.Errorf("empty count")
	}
	return strconv.Atoi(strings.Trim(f[len(f)-1], "*"))
}

// mutationPercent reads a percentage cell, "94.91 %" or "**94.91 %**".
func mutationPercent(cell string) (float64, error) {
	f := strings.Fields(strings.Trim(strings.TrimSpace(cell), "*"))
	if len(f) < 2 || f[1] != "%" {
		return 0, fmt.Errorf("%q is not a percentage", cell)
	}
	return strconv.ParseFloat(f[0], 64)
}

// mutationTables reads every table of page whose last six columns are
// killed, lived, timed out, not covered, efficacy and coverage.
func mutationTables(page string) ([][]mutationRow, error) {
	var tables [][]mutationRow
	in := false
	for _, line := range strings.Split(page, "\n") {
		if !strings.HasPrefix(line, "|") {
			in = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if strings.HasSuffix(line, "| killed | lived | timed out | not covered | efficacy | coverage |") {
			in = true
			tables = append(tables, nil)
			continue
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		if len(cells) < 7 {
			return nil, fmt.Errorf("%q: fewer than 7 cells", line)
		}
		c := cells[len(cells)-6:]
		r := mutationRow{name: strings.TrimSpace(cells[0])}
		r.total = strings.HasPrefix(r.name, "**")
		r.name = strings.Trim(r.name, "*")
		var err error
		for i, p := range []*int{&r.killed, &r.lived, &r.timedOut, &r.notCovered} {
			if *p, err = mutationCount(c[i]); err != nil {
				return nil, fmt.Errorf("%q: %w", line, err)
			}
		}
		for i, p := range []*float64{&r.efficacy, &r.coverage} {
			if *p, err = mutationPercent(c[4+i]); err != nil {
				return nil, fmt.Errorf("%q: %w", line, err)
			}
		}
		tables[len(tables)-1] = append(tables[len(tables)-1], r)
	}
	return tables, nil
}

// mutationProblems says where a table's figures disagree: a row's
// efficacy (killed over killed and lived) or coverage (killed and lived
// over those and not covered) not its counts', to the 0.01 % quoted; a
// bold row not the sum of the rows above it; and a package's row in the
// first table (the summary) not its bold row further down.
func mutationProblems(tables [][]mutationRow) []string {
	var problems []string
	pct := func(a, b int) float64 { return 100 * float64(a) / float64(b) }
	totals := map[string]mutationRow{}
	for _, tab := range tables {
		var sum mutationCounts
		for _, r := range tab {
			if got := pct(r.killed, r.killed+r.lived); math.Abs(got-r.efficacy) > 0.005 {
				problems = append(problems, fmt.Sprintf("%s: efficacy %.2f %% quoted, its counts give %.2f %%", r.name, r.efficacy, got))
			}
			if got := pct(r.killed+r.lived, r.killed+r.lived+r.notCovered); math.Abs(got-r.coverage) > 0.005 {
				problems = append(problems, fmt.Sprintf("%s: coverage %.2f %% quoted, its counts give %.2f %%", r.name, r.coverage, got))
			}
			if !r.total {
				sum.killed += r.killed
				sum.lived += r.lived
				sum.timedOut += r.timedOut
				sum.notCovered += r.notCovered
				continue
			}
			if r.mutationCounts != sum {
				problems = append(problems, fmt.Sprintf("%s: total %v, its rows sum to %v", r.name, r.mutationCounts, sum))
			}
			totals[r.name] = r
		}
	}
	if len(tables) > 0 {
		for _, r := range tables[0] {
			t, ok := totals[r.name]
			if !ok {
				continue
			}
			if r.mutationCounts != t.mutationCounts {
				problems = append(problems, fmt.Sprintf("%s: summary %v, its section %v", r.name, r.mutationCounts, t.mutationCounts))
			}
		}
	}
	return problems
}

// TestMutationTablesAddUp: mutation.md's hand-copied counts agree with
// their percentages, their totals and the summary at the top.
func TestMutationTablesAddUp(t *testing.T) {
	tables, err := mutationTables(readPage(t, "mutation.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 3 {
		t.Fatalf("%d mutation tables in mutation.md, want the summary and two sections", len(tables))
	}
	for _, p := range mutationProblems(tables) {
		t.Error(p)
	}
}

// The check finds a wrong efficacy, a wrong total and a stale summary.
func TestMutationProblemsFindsDrift(t *testing.T) {
	page := `
| package | killed | lived | timed out | not covered | efficacy | coverage |
|---|---|---|---|---|---|---|
| ` + "`m`" + ` | 10 | 1 | 0 | 0 | **90.91 %** | **100 %** |

| file | killed | lived | timed out | not covered | efficacy | coverage |
|---|---|---|---|---|---|---|
| a | 4 → 5 | 1 | 0 | 1 → 0 | 83.33 % | 100 % |
| b | 5 | 0 | 2 | 0 | 100 % | 100 % |
| **` + "`m`" + `** | **10** | **1** | **2** | **0** | **90.91 %** | **100 %** |
`
	tables, err := mutationTables(page)
	if err != nil {
		t.Fatal(err)
	}
	got := mutationProblems(tables)
	want := []string{"`m`: summary 10/1/0/0, its section 10/1/2/0"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tables[1][0].efficacy = 80
	tables[1][1].killed = 6
	got = mutationProblems(tables)
	want = []string{"a: efficacy 80.00 % quoted, its counts give 83.33 %", "`m`: total 10/1/2/0, its rows sum to 11/1/2/0", want[0]}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
