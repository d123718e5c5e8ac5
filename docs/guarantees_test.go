package docs

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/xpwc/xpwc/spec"
)

// The guarantee → checks table (guarantee-checks.md) is generated from the
// repository: a Go test claims a guarantee by naming it (G1 … G8) in its
// name or doc comment, as the tests here do; a scenario file claims it by
// its name (gN-…) or in its header comment. Regenerate with
//
//	go test ./docs -run GuaranteeChecks -update
//
// (or XPWC_UPDATE_DOCS=1).

var update = flag.Bool("update", false, "rewrite the generated docs: guarantee-checks.md and the API tables")

// checkKind says which side of the design a check exercises.
type checkKind int

const (
	// unitCheck is a Go test of the implementation (impl/, spec/,
	// faultinject/, cmd/, …).
	unitCheck checkKind = iota
	// modelCheck is a model or scenario check: a test in model/ or sim/,
	// or a scenario file replayed on the model and the cache in lockstep.
	modelCheck
)

// check is one test or scenario and the guarantees it claims.
type check struct {
	kind  checkKind
	where string // repository path of the file
	name  string // test function, or "" for a scenario file
	gs    []spec.GuaranteeID
}

func (c check) String() string {
	if c.name == "" {
		return fmt.Sprintf("`%s`", c.where)
	}
	return fmt.Sprintf("`%s` %s", c.where, c.name)
}

var (
	// A guarantee named in prose: G1 … G8 as a word (G3–G8 ranges are
	// statements about the design, not claims of a test, and are skipped).
	docGRE = regexp.MustCompile(`(?:^|[^\w–-])G([1-8])(?:[^\w–-]|$)`)
	// A guarantee in a test name: TestG7HostileFileContent.
	nameGRE = regexp.MustCompile(`G([1-8])(?:[A-Z_]|$)`)
	// A reference scenario file: g2-crash-inside-commit.
	scenarioGRE = regexp.MustCompile(`^g([1-8])-`)
)

func guaranteesIn(re *regexp.Regexp, s string) []spec.GuaranteeID {
	var out []spec.GuaranteeID
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, spec.GuaranteeID("G"+m[1]))
	}
	return out
}

// collectChecks walks the repository at root.
func collectChecks(root string) ([]check, error) {
	var out []check
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" && !strings.HasPrefix(rel, "sim/testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(rel, "_test.go"):
			cs, err := testChecks(path, rel)
			out = append(out, cs...)
			return err
		case strings.HasPrefix(rel, "sim/testdata/scenarios/"):
			c, err := scenarioCheck(path, rel)
			if len(c.gs) > 0 {
				out = append(out, c)
			}
			return err
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, err
}

// testChecks returns the Test functions of a Go test file that claim a
// guarantee.
func testChecks(path, rel string) ([]check, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	kind := unitCheck
	if strings.HasPrefix(rel, "model/") || strings.HasPrefix(rel, "sim/") {
		kind = modelCheck
	}
	var out []check
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") {
			continue
		}
		gs := guaranteesIn(nameGRE, strings.TrimPrefix(fn.Name.Name, "Test"))
		if fn.Doc != nil {
			gs = append(gs, guaranteesIn(docGRE, fn.Doc.Text())...)
		}
		if gs = uniq(gs); len(gs) > 0 {
			out = append(out, check{kind: kind, where: rel, name: fn.Name.Name, gs: gs})
		}
	}
	return out, nil
}

// scenarioCheck reads what a scenario file claims: its name, and the
// guarantees its header comment names.
func scenarioCheck(path, rel string) (check, error) {
	c := check{kind: modelCheck, where: rel}
	c.gs = guaranteesIn(scenarioGRE, filepath.Base(rel))
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() && strings.HasPrefix(sc.Text(), "#") {
		c.gs = append(c.gs, guaranteesIn(docGRE, sc.Text())...)
	}
	c.gs = uniq(c.gs)
	return c, sc.Err()
}

func uniq(gs []spec.GuaranteeID) []spec.GuaranteeID {
	sort.Slice(gs, func(i, j int) bool { return gs[i] < gs[j] })
	var out []spec.GuaranteeID
	for i, g := range gs {
		if i == 0 || g != gs[i-1] {
			out = append(out, g)
		}
	}
	return out
}

// byGuarantee groups checks by the guarantees they claim.
func byGuarantee(cs []check) map[spec.GuaranteeID][2][]check {
	out := map[spec.GuaranteeID][2][]check{}
	for _, c := range cs {
		for _, g := range c.gs {
			e := out[g]
			e[c.kind] = append(e[c.kind], c)
			out[g] = e
		}
	}
	return out
}

// coverageProblems lists every guarantee caught by fewer than two
// independent checks: at least one unit test and at least one model or
// scenario check.
func coverageProblems(cs []check) []string {
	by := byGuarantee(cs)
	var out []string
	for _, g := range spec.Guarantees() {
		e := by[g.ID]
		if len(e[unitCheck]) == 0 {
			out = append(out, fmt.Sprintf("%s (%s) has no unit test", g.ID, g.Title))
		}
		if len(e[modelCheck]) == 0 {
			out = append(out, fmt.Sprintf("%s (%s) has no model or scenario check", g.ID, g.Title))
		}
	}
	return out
}

// renderTable writes guarantee-checks.md.
func renderTable(cs []check) string {
	by := byGuarantee(cs)
	var b strings.Builder
	b.WriteString("# Which checks catch each guarantee\n\n")
	b.WriteString("Generated from the repository by `docs/guarantees_test.go` (`go test ./docs\n")
	b.WriteString("-run GuaranteeChecks -update`); do not edit. A Go test claims a guarantee by\n")
	b.WriteString("naming it (G1 … G8) in its name or doc comment; a scenario file by its name\n")
	b.WriteString("(`gN-…`) or its header comment. *Unit* tests exercise the implementation;\n")
	b.WriteString("*model and scenario* checks are tests of `model/` and `sim/` and the scenario\n")
	b.WriteString("files `sim` replays on the model and the cache in lockstep\n")
	b.WriteString("([scenarios.md](scenarios.md)). Besides these, the model's explorer checks\n")
	b.WriteString("the invariants of every guarantee at every transition of the reference\n")
	b.WriteString("design ([lifecycle.md](lifecycle.md)). `TestGuaranteeChecks` fails when a\n")
	b.WriteString("guarantee has no unit test or no model or scenario check, or when this page\n")
	b.WriteString("lists a check that no longer claims its guarantee; with\n")
	b.WriteString("`XPWC_STRICT_DOCS=1` also when it misses a check added since.\n\n")
	b.WriteString("| guarantee | unit tests | model and scenario checks | invariants checked by the explorer |\n|---|---|---|---|\n")
	invs := map[spec.GuaranteeID][]string{}
	for _, inv := range spec.Invariants() {
		invs[inv.Guarantee] = append(invs[inv.Guarantee], string(inv.ID))
	}
	for _, g := range spec.Guarantees() {
		e := by[g.ID]
		fmt.Fprintf(&b, "| [%s %s](#%s) | %d | %d | %s |\n", g.ID, g.Title, strings.ToLower(string(g.ID)), len(e[unitCheck]), len(e[modelCheck]), strings.Join(invs[g.ID], ", "))
	}
	for _, g := range spec.Guarantees() {
		e := by[g.ID]
		// The statement is guarantees.md's; this page links to it.
		fmt.Fprintf(&b, "\n## %s\n\n[%s %s](guarantees.md#%s)\n", g.ID, g.ID, g.Title, anchor(string(g.ID)+" "+g.Title))
		for kind, title := range []string{"Unit tests", "Model and scenario checks"} {
			fmt.Fprintf(&b, "\n%s:\n\n", title)
			for _, c := range e[kind] {
				fmt.Fprintf(&b, "- %s\n", c)
			}
		}
	}
	return b.String()
}

// TestGuaranteeChecks fails when a guarantee is caught by fewer than two
// independent checks, and when guarantee-checks.md lists a check that no
// longer claims its guarantee (a renamed or removed test: the page would
// promise a check that is gone). A page that misses checks added since it
// was generated is only reported in the log, so that adding a test never
// breaks another engineer's build; XPWC_STRICT_DOCS=1 (or -update) makes
// the page exactly what the repository claims.
func TestGuaranteeChecks(t *testing.T) {
	cs, err := collectChecks("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range coverageProblems(cs) {
		t.Errorf("guarantee coverage: %s", p)
	}
	want := renderTable(cs)
	if *update || os.Getenv("XPWC_UPDATE_DOCS") == "1" {
		if err := os.WriteFile("guarantee-checks.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("guarantee-checks.md")
	if err != nil {
		t.Fatalf("guarantee-checks.md missing: run go test ./docs -run GuaranteeChecks -update")
	}
	if string(got) == want {
		return
	}
	listed, current := listedChecks(string(got)), listedChecks(want)
	for g, lines := range listed {
		for l := range lines {
			if !current[g][l] {
				t.Errorf("guarantee-checks.md lists %s under %s, which no longer claims it: run go test ./docs -run GuaranteeChecks -update", l, g)
			}
		}
	}
	if os.Getenv("XPWC_STRICT_DOCS") == "1" {
		t.Errorf("guarantee-checks.md is stale: run go test ./docs -run GuaranteeChecks -update")
	} else {
		t.Logf("guarantee-checks.md misses checks added since it was generated: run go test ./docs -run GuaranteeChecks -update")
	}
}

// listedChecks reads the check lines of each guarantee's section of a
// rendered page.
func listedChecks(page string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	section := ""
	for _, l := range strings.Split(page, "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			section = strings.TrimPrefix(l, "## ")
			out[section] = map[string]bool{}
		case section != "" && strings.HasPrefix(l, "- "):
			out[section][l] = true
		}
	}
	return out
}

// coverageProblems reports a guarantee caught from one side only, or not
// at all, and nothing when both sides catch every guarantee.
func TestCoverageProblemsNeedsBothSides(t *testing.T) {
	var all []spec.GuaranteeID
	for _, g := range spec.Guarantees() {
		all = append(all, g.ID)
	}
	full := []check{
		{kind: unitCheck, where: "impl/x_test.go", name: "TestU", gs: all},
		{kind: modelCheck, where: "sim/testdata/scenarios/s", gs: all},
	}
	if p := coverageProblems(full); len(p) != 0 {
		t.Fatalf("full coverage reported as %v", p)
	}
	without := func(drop spec.GuaranteeID, kind checkKind) []check {
		var out []check
		for _, c := range full {
			c.gs = append([]spec.GuaranteeID(nil), c.gs...)
			if c.kind == kind {
				c.gs = c.gs[:0]
				for _, g := range all {
					if g != drop {
						c.gs = append(c.gs, g)
					}
				}
			}
			out = append(out, c)
		}
		return out
	}
	for _, tc := range []struct {
		kind checkKind
		want string
	}{
		{unitCheck, "G5 (memory) has no unit test"},
		{modelCheck, "G5 (memory) has no model or scenario check"},
	} {
		p := coverageProblems(without(spec.G5, tc.kind))
		if len(p) != 1 || p[0] != tc.want {
			t.Errorf("G5 without one side: got %q, want [%q]", p, tc.want)
		}
	}
	// Claims are read from names, doc comments and scenario headers.
	if got := guaranteesIn(nameGRE, "G7HostileFileContent"); len(got) != 1 || got[0] != spec.G7 {
		t.Errorf("name claim: %v", got)
	}
	if got := guaranteesIn(docGRE, "G2 and G8 hold; G3–G8 is a range (G4)"); fmt.Sprint(got) != "[G2 G8 G4]" {
		t.Errorf("doc claims: %v", got)
	}
}
