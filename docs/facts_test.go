package docs

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// The facts the pages state about the code (versions, magics, sizes,
// options and their defaults, policies, reasons) are read here from the
// code itself, so that a change on either side fails until both say the
// same. Where a list is long and exact, the page holds a table generated
// from the code between the markers below (regenerate with
// go test ./docs -run APITables -update).

// goPkg is a package of the module as go doc reads it, with the file set
// of its positions.
type goPkg struct {
	*doc.Package
	fset *token.FileSet
}

// goDoc parses the non-test files of the module's package in dir (relative
// to the repository root) the way go doc reads them.
func goDoc(t *testing.T, dir string) goPkg {
	t.Helper()
	fset, files := parsePackage(t, dir, parser.ParseComments)
	p, err := doc.NewFromFiles(fset, files, module+dir)
	if err != nil {
		t.Fatal(err)
	}
	return goPkg{p, fset}
}

// docType returns the named type of p.
func docType(t *testing.T, p goPkg, name string) *doc.Type {
	t.Helper()
	for _, ty := range p.Types {
		if ty.Name == name {
			return ty
		}
	}
	t.Fatalf("%s has no type %s", p.ImportPath, name)
	return nil
}

// fieldGroup is the exported fields of a struct that one doc comment
// describes: the line under the comment and the uncommented lines right
// after it. Each name comes with its type as written.
type fieldGroup struct {
	names, types []string
	doc          string
}

// structFields returns the exported fields of struct type name in p.
func structFields(t *testing.T, p goPkg, name string) []fieldGroup {
	t.Helper()
	st, ok := docType(t, p, name).Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType)
	if !ok {
		t.Fatalf("%s.%s is not a struct", p.Name, name)
	}
	var out []fieldGroup
	prevEnd := -1
	for _, f := range st.Fields.List {
		line := p.fset.Position(f.Pos()).Line
		joins := f.Doc == nil && line == prevEnd+1 && len(out) > 0
		prevEnd = p.fset.Position(f.End()).Line
		if !joins {
			out = append(out, fieldGroup{doc: strings.Join(strings.Fields(f.Doc.Text()), " ")})
		}
		g := &out[len(out)-1]
		for _, id := range f.Names {
			if id.IsExported() {
				g.names = append(g.names, id.Name)
				g.types = append(g.types, exprString(t, f.Type))
			}
		}
	}
	return slices.DeleteFunc(out, func(g fieldGroup) bool { return len(g.names) == 0 })
}

// typedConsts returns the constants of type name declared in p, by name,
// with the value written for them ("" under iota).
func typedConsts(t *testing.T, p goPkg, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range docType(t, p, name).Consts {
		for _, s := range c.Decl.Specs {
			vs := s.(*ast.ValueSpec)
			for i, id := range vs.Names {
				out[id.Name] = ""
				if i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						out[id.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s declares no constants of type %s", p.Name, name)
	}
	return out
}

func readPage(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFormatFactsCurrent: the versions, magics and sizes docs/format.md
// states are spec's constants. Each pattern must be found on the page (so a
// rephrased sentence fails here rather than going unchecked) and say what
// the code says.
func TestFormatFactsCurrent(t *testing.T) {
	page := readPage(t, "format.md")
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	facts := []struct {
		what string
		re   string
		want []string
	}{
		{"v2 footer magic and its bytes", "\\| `magic` u32 \\| `(0x[0-9A-Fa-f]+)`; bytes on disk `[0-9a-f ]+` = \"([A-Z]+)\"",
			[]string{fmt.Sprintf("0x%08X", spec.V2Magic), string(binary4(spec.V2Magic))}},
		{"v2 footer version", "\\| `version` u32 \\| ([0-9]+) \\|", []string{u(spec.V2Version)}},
		{"v2 version check", "\\| version = ([0-9]+) \\| `\\*VersionError\\{Got, Want: ([0-9]+)\\}`", []string{u(spec.V2Version), u(spec.V2Version)}},
		{"v2 footer size", "Footer, ([0-9]+) bytes:", []string{strconv.Itoa(spec.V2FooterSize)}},
		{"versions in the error table", "version field is not ([0-9]+) \\(v2 footer\\) or ([0-9]+) \\(v3 slot\\)", []string{u(spec.V2Version), u(spec.V3Version)}},
		{"v3 slot version check", "version\\s+\\(`\\*VersionError\\{Got, Want: ([0-9]+)\\}`", []string{u(spec.V3Version)}},
		{"v3 slot version field", "\\| 8 \\| 4 \\| version u32 \\| ([0-9]+) ", []string{u(spec.V3Version)}},
		{"v3 slot magic", "\\| 0 \\| 8 \\| magic \\| `\"([A-Z0-9]+)\"` \\|", []string{spec.V3SlotMagic}},
		{"v3 slot size", "### Commit slot \\(([0-9]+) bytes", []string{strconv.Itoa(spec.V3SlotSize)}},
		{"v3 index header", "Header, ([0-9]+) bytes: magic `\"([A-Z0-9]+)\"`", []string{strconv.Itoa(spec.V3IndexHeaderSize), spec.V3IndexMagic}},
		{"v3 entry's fixed part", "\\| ([0-9]+) \\| name_len \\| name \\|", []string{strconv.Itoa(spec.V3EntryFixedSize)}},
		{"smallest v3 entry", "The smallest entry is ([0-9]+) bytes", []string{strconv.Itoa(spec.V3MinEntrySize)}},
		{"v3 entry size", "`count` × ([0-9]+) ≤ block length − ([0-9]+)", []string{strconv.Itoa(spec.V3MinEntrySize), strconv.Itoa(spec.V3IndexHeaderSize)}},
		{"parsed entry's size (allocation bound)", "the `\\[\\]Entry` \\(([0-9]+) bytes each\\)", []string{strconv.Itoa(int(reflect.TypeFor[spec.Entry]().Size()))}},
	}
	for _, f := range facts {
		ms := regexp.MustCompile(f.re).FindAllStringSubmatch(page, -1)
		if len(ms) == 0 {
			t.Errorf("format.md: the %s is not where this test looks for it (%s)", f.what, f.re)
			continue
		}
		for _, m := range ms {
			if !slices.Equal(m[1:], f.want) {
				t.Errorf("format.md states the %s as %q; spec says %q", f.what, m[1:], f.want)
			}
		}
	}
	// Any other version a VersionError is said to want is one of the two.
	for _, m := range regexp.MustCompile(`Want: ([0-9]+)`).FindAllStringSubmatch(page, -1) {
		if m[1] != u(spec.V2Version) && m[1] != u(spec.V3Version) {
			t.Errorf("format.md: a *VersionError wants %s; spec's versions are %d (v2) and %d (v3)", m[1], spec.V2Version, spec.V3Version)
		}
	}
}

// binary4 is v's four bytes as stored little-endian.
func binary4(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

// TestHeapReasonsDocumented: the table of cache.md's "Where packed bytes
// go" has one row for every cache.HeapReason, and no other reason.
func TestHeapReasonsDocumented(t *testing.T) {
	var want []string
	for _, v := range typedConsts(t, goDoc(t, "impl/cache"), "HeapReason") {
		want = append(want, v)
	}
	_, table, _ := strings.Cut(readPage(t, "cache.md"), "| placement | when | `Stats.HeapBytes` reason |")
	table, _, _ = strings.Cut(table, "\n\n")
	var got []string
	for _, m := range regexp.MustCompile("(?m)^\\| heap \\|.*\\| `([a-z-]+)` \\|$").FindAllStringSubmatch(table, -1) {
		got = append(got, m[1])
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("cache.md's placement table lists the heap reasons %v; cache.HeapReason has %v", got, want)
	}
}

// TestVerifyPoliciesDocumented: cache.md's policy table has one row for
// every cache.VerifyPolicy constant, each named as spec.VerifyPolicies
// names it, and no other. VerifyDefault, the zero value, is no policy of
// its own (it resolves to DefaultVerifyData): the table names it in that
// policy's row.
func TestVerifyPoliciesDocumented(t *testing.T) {
	var want []string
	for name := range typedConsts(t, goDoc(t, "impl/cache"), "VerifyPolicy") {
		if name != "VerifyDefault" {
			want = append(want, name)
		}
	}
	var ids []string
	for _, p := range spec.VerifyPolicies() {
		ids = append(ids, string(p.ID))
	}
	_, table, _ := strings.Cut(readPage(t, "cache.md"), "| policy | name | checks")
	table, _, _ = strings.Cut(table, "\n\n")
	var got, gotIDs []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(Verify[A-Za-z]+)`[^|]* \\| `([a-z-]+)` \\|").FindAllStringSubmatch(table, -1) {
		got = append(got, m[1])
		gotIDs = append(gotIDs, m[2])
	}
	for _, s := range [][]string{want, ids, got, gotIDs} {
		slices.Sort(s)
	}
	if !slices.Equal(got, want) || !slices.Equal(gotIDs, ids) {
		t.Errorf("cache.md's policy table lists %v named %v; the code has %v named %v", got, gotIDs, want, ids)
	}
	if !strings.Contains(table, "`VerifyDefault`") {
		t.Errorf("cache.md's policy table does not say which policy the zero value VerifyDefault is")
	}
}

// TestDefaultsStated: a heading that says whether a launch default is on
// or off says what the zero options resolve to.
func TestDefaultsStated(t *testing.T) {
	o, err := cache.Options{Path: "c"}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	page := readPage(t, "runtime.md")
	for _, c := range []struct {
		name string
		on   bool
		re   string
	}{
		{"verify-ahead", !o.DisableVerifyAhead, `(?m)^#+ Verifying ahead \((?:an option, )?(on|off)`},
	} {
		want := map[bool]string{true: "on", false: "off"}[c.on]
		m := regexp.MustCompile(c.re).FindStringSubmatch(page)
		if m == nil {
			t.Errorf("runtime.md has no heading saying whether %s is on (%s)", c.name, c.re)
		} else if m[1] != want {
			t.Errorf("runtime.md's heading says %s is %s; the zero cache.Options resolve it %s", c.name, m[1], want)
		}
	}
}

// constValues returns every package-level constant of p with the
// expression written for it.
func constValues(t *testing.T, p goPkg) map[string]string {
	t.Helper()
	out := map[string]string{}
	consts := slices.Clone(p.Consts)
	for _, ty := range p.Types {
		consts = append(consts, ty.Consts...)
	}
	for _, c := range consts {
		for _, s := range c.Decl.Specs {
			vs := s.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if i < len(vs.Values) {
					out[id.Name] = exprString(t, vs.Values[i])
				}
			}
		}
	}
	return out
}

func exprString(t *testing.T, e ast.Expr) string {
	t.Helper()
	var b strings.Builder
	if err := printer.Fprint(&b, token.NewFileSet(), e); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
