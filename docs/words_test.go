package docs

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wordBudget bounds the design reference (docs/*.md, as `wc -w docs/*.md`
// counts them). A reference a reader can hold is one that answers each
// question once and links to the rest; a page that grows a log of runs or
// restates another page's idea pushes the total over, and this fails with
// the page sizes so the growth is found where it happened.
const wordBudget = 50_000

// words counts as wc -w does: runs of non-space characters.
func words(text string) int { return len(strings.Fields(text)) }

type pageWords struct {
	page  string
	words int
}

// docsWords returns the words of each docs page, largest first, and the
// total.
func docsWords(t *testing.T) ([]pageWords, int) {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	var pages []pageWords
	total := 0
	for _, f := range files {
		n := words(readPage(t, f))
		pages = append(pages, pageWords{f, n})
		total += n
	}
	slices.SortFunc(pages, func(a, b pageWords) int { return cmp.Compare(b.words, a.words) })
	return pages, total
}

// TestDocsWordBudget: the docs stay under wordBudget words.
func TestDocsWordBudget(t *testing.T) {
	pages, total := docsWords(t)
	if len(pages) < 10 {
		t.Fatalf("found %d docs pages; run from docs/", len(pages))
	}
	if problem := budgetProblem(pages, total, wordBudget); problem != "" {
		t.Error(problem)
	}
}

// budgetProblem says how a docs total breaks the budget, listing the
// pages by size, or "" if it holds.
func budgetProblem(pages []pageWords, total, budget int) string {
	if total < budget {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "docs/*.md hold %d words, the budget is under %d: shorten a page (link instead of restating, drop run logs)\n", total, budget)
	for _, p := range pages {
		fmt.Fprintf(&b, "%7d %s\n", p.words, p.page)
	}
	return b.String()
}

// The budget check fails on a total at the budget and names the pages.
func TestBudgetProblemNamesPages(t *testing.T) {
	pages := []pageWords{{"model.md", 30}, {"cache.md", 20}}
	if p := budgetProblem(pages, 50, 51); p != "" {
		t.Errorf("under the budget: %q", p)
	}
	p := budgetProblem(pages, 50, 50)
	if !strings.Contains(p, "30 model.md") || !strings.Contains(p, "20 cache.md") {
		t.Errorf("at the budget, the problem does not list the pages: %q", p)
	}
}
