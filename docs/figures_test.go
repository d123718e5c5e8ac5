package docs

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/model/explore"
)

// TestExplorerFiguresCurrent: the state and transition counts the docs
// quote for each design at the default bounds are the ones the explorer
// finds now, so a model change that moves them cannot leave the docs
// stale. It explores every design once (several seconds).
func TestExplorerFiguresCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("explores every design at the default bounds")
	}
	type figures struct{ states, transitions int }
	got := map[string]figures{}
	for _, d := range model.Designs() {
		r, err := explore.Run(d, explore.Options{Bounds: model.DefaultBounds()})
		if err != nil {
			t.Fatal(err)
		}
		got[d.Name] = figures{r.States, r.Transitions}
	}
	num := func(s string) int {
		n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	checked := 0
	// bugs.md: "`simrun explore --design NAME --programs 2 --sources 2
	// --depth 14` (N states to depth 14)": the bounds of the figures, not
	// the explorer's own default, which runs to the end.
	for _, m := range regexp.MustCompile("`simrun explore --design ([a-z0-9-]+) --programs 2 --sources 2 --depth 14` \\(([0-9,]+) states to depth 14\\)").FindAllStringSubmatch(read("bugs.md"), -1) {
		checked++
		if want := got[m[1]].states; num(m[2]) != want {
			t.Errorf("bugs.md: %s explores %s states, now %d", m[1], m[2], want)
		}
	}
	// bugs.md: the reference's count.
	if m := regexp.MustCompile(`The reference design explores\s+([0-9,]+) states`).FindStringSubmatch(read("bugs.md")); m == nil {
		t.Error("bugs.md: the reference's state count is not where this test looks for it")
	} else if checked++; num(m[1]) != got["reference"].states {
		t.Errorf("bugs.md: the reference explores %s states, now %d", m[1], got["reference"].states)
	}
	// model.md: "**NAME** (N states, M transitions".
	for _, m := range regexp.MustCompile(`\*\*([a-z0-9-]+)\*\* \(([0-9,]+) states, ([0-9,]+) transitions`).FindAllStringSubmatch(read("model.md"), -1) {
		checked++
		g := got[m[1]]
		if num(m[2]) != g.states || num(m[3]) != g.transitions {
			t.Errorf("model.md: %s: %s states, %s transitions; now %d and %d", m[1], m[2], m[3], g.states, g.transitions)
		}
	}
	// guarantees.md: "the reference design has no violation in N states".
	if m := regexp.MustCompile(`the reference design has no violation in\s+([0-9,]+) states`).FindStringSubmatch(read("guarantees.md")); m == nil {
		t.Error("guarantees.md: the reference's state count is not where this test looks for it")
	} else if checked++; num(m[1]) != got["reference"].states {
		t.Errorf("guarantees.md: the reference explores %s states, now %d", m[1], got["reference"].states)
	}
	// Any page quoting simrun explore's output at the default bounds:
	// "design NAME: depth 14, N states, M transitions".
	for _, page := range markdown(t) {
		for _, m := range regexp.MustCompile(`design ([a-z0-9-]+): depth 14, ([0-9]+) states, ([0-9]+) transitions`).FindAllStringSubmatch(read(page), -1) {
			checked++
			g := got[m[1]]
			if num(m[2]) != g.states || num(m[3]) != g.transitions {
				t.Errorf("%s quotes simrun explore's output for %s: %s states, %s transitions; now %d and %d", page, m[1], m[2], m[3], g.states, g.transitions)
			}
		}
	}
	if checked < 2*(len(got)-1)+3 {
		t.Errorf("checked %d figures; the docs' phrasing moved away from what this test reads", checked)
	}
}

// TestExhaustiveFiguresCurrent: model.md's figures for the runs to the end
// at model.ExhaustiveBounds — the reference's row of the bounds table and
// every design's row (states and liveness verdict) — are what the explorer
// gives now.
func TestExhaustiveFiguresCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("explores every design to the end at the exhaustive bounds")
	}
	b, err := os.ReadFile("model.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	num := func(s string) int {
		n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	runs := map[string]explore.Result{}
	result := func(name string) explore.Result {
		if r, ok := runs[name]; ok {
			return r
		}
		d, err := model.DesignByName(name)
		if err != nil {
			t.Fatalf("model.md: %v", err)
		}
		r, err := explore.Run(d, explore.Options{Bounds: model.ExhaustiveBounds(), Liveness: true, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		runs[name] = r
		return r
	}
	m := regexp.MustCompile("\\| `ExhaustiveBounds` \\(reference\\) \\| ([0-9,]+) \\| ([0-9,]+) \\|").FindStringSubmatch(page)
	if m == nil {
		t.Fatal("model.md: the ExhaustiveBounds row is not where this test looks for it")
	}
	if r := result("reference"); num(m[1]) != r.States || num(m[2]) != r.Transitions {
		t.Errorf("model.md: ExhaustiveBounds row %s states, %s transitions; now %d and %d", m[1], m[2], r.States, r.Transitions)
	}
	rows := regexp.MustCompile(`(?m)^\| ([a-z0-9-]+) \| ([0-9,]+) \| [^|]* \| (converges|lasso I4-converge \(([0-9]+) fair components\)) \|$`).FindAllStringSubmatch(page, -1)
	if len(rows) < 5 {
		t.Fatalf("model.md: %d rows of the every-design table found; its phrasing moved away from what this test reads", len(rows))
	}
	for _, row := range rows {
		r := result(row[1])
		if num(row[2]) != r.States {
			t.Errorf("model.md: %s explores %s states at ExhaustiveBounds, now %d", row[1], row[2], r.States)
		}
		converges := row[3] == "converges"
		if !r.Liveness.Checked || converges != (len(r.Liveness.Violations) == 0) ||
			(!converges && num(row[4]) != r.Liveness.FairComponents) {
			t.Errorf("model.md: %s: %q, now checked %v, %d fair components, %d lassos", row[1], row[3],
				r.Liveness.Checked, r.Liveness.FairComponents, len(r.Liveness.Violations))
		}
	}
}
