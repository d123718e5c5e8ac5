package docs

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xpwc/xpwc/spec"
)

// TestLoadOutcomesDocumented: every page that lists the outcomes of a load
// by hand lists exactly the names of spec.LoadOutcome (all but "none",
// which no load reports), so an outcome added, renamed or dropped in the
// code fails here until the pages say the same.
func TestLoadOutcomesDocumented(t *testing.T) {
	var want []string
	for l := spec.LoadOutcome(1); !strings.HasPrefix(l.String(), "LoadOutcome("); l++ {
		want = append(want, l.String())
	}
	slices.Sort(want)
	if len(want) < 5 {
		t.Fatalf("spec names %d load outcomes: %v", len(want), want)
	}
	lists := []struct{ page, from, to string }{
		{"cache.md", "outcome of the last load:", "\n"},
		{"conform.md", "one of the names of `spec.LoadOutcome`:", "(any other word"},
		{"simrun.md", "\n| `load` |", "\n"},
	}
	word := regexp.MustCompile("`([a-z][a-z-]*)`")
	for _, l := range lists {
		b, err := os.ReadFile(l.page)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(b), l.from)
		if !ok {
			t.Errorf("%s: no %q: update this test with the page", l.page, l.from)
			continue
		}
		text, _, _ := strings.Cut(rest, l.to)
		var got []string
		for _, m := range word.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(got, m[1]) {
				got = append(got, m[1])
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s lists the load outcomes %v; spec.LoadOutcome has %v", l.page, got, want)
		}
	}
}
