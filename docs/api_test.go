package docs

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The option and report structs a Go user fills in and reads are listed on
// their pages field by field in tables generated from the code: the field
// names, types and doc comments (which state each default) are go doc's.
// Regenerate with
//
//	go test ./docs -run APITables -update

// apiTable is one generated table: a type of a package, on a page.
type apiTable struct {
	page, dir, typ string
}

var apiTables = []apiTable{
	{"cache.md", "impl/cache", "Options"},
	{"runtime.md", "impl/runtime", "LaunchConfig"},
	{"runtime.md", "impl/runtime", "LaunchReport"},
}

// defaultsTables are the generated lists of a package's Default constants.
var defaultsTables = []struct{ page, dir string }{
	{"cache.md", "impl/cache"},
	{"runtime.md", "impl/runtime"},
}

func tableMarkers(what, test string) (begin, end string) {
	return "<!-- generated: " + what + " (go test ./docs -run " + test + " -update) -->\n", "<!-- end generated: " + what + " -->\n"
}

// syncGenerated checks that the block of page between the markers of what
// is want; with -update (or XPWC_UPDATE_DOCS=1) it rewrites the block
// instead. The markers are placed by hand; test is the test that
// regenerates the block.
func syncGenerated(t *testing.T, page, what, test, want string) {
	t.Helper()
	text := readPage(t, page)
	begin, end := tableMarkers(what, test)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Errorf("%s: no generated table of %s: place the lines\n%s%s", page, what, begin, end)
		return
	}
	if text[i+len(begin):j] == want {
		return
	}
	if *update || os.Getenv("XPWC_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(page, []byte(text[:i+len(begin)]+want+text[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the table of %s is stale: run go test ./docs -run %s -update", page, what, test)
}

func renderFields(t *testing.T, p goPkg, typ string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| `%s.%s` field | what it is, and its default (the field's doc comment) |\n|---|---|\n", p.Name, typ)
	for _, g := range structFields(t, p, typ) {
		fields := make([]string, len(g.names))
		for i, n := range g.names {
			fields[i] = "`" + n + " " + g.types[i] + "`"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", strings.Join(fields, "<br>"), strings.ReplaceAll(g.doc, "|", `\|`))
	}
	return b.String()
}

func renderDefaults(t *testing.T, p goPkg) string {
	values := constValues(t, p)
	var b strings.Builder
	fmt.Fprintf(&b, "| `%s` constant | value | |\n|---|---|---|\n", p.Name)
	consts := slices.Clone(p.Consts)
	for _, ty := range p.Types {
		consts = append(consts, ty.Consts...)
	}
	var names []string
	docs := map[string]string{}
	for _, c := range consts {
		for _, n := range c.Names {
			if strings.HasPrefix(n, "Default") {
				names = append(names, n)
				docs[n] = firstSentence(p, c.Doc)
			}
		}
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", n, values[n], docs[n])
	}
	return b.String()
}

func firstSentence(p goPkg, text string) string {
	return strings.Join(strings.Fields(p.Synopsis(text)), " ")
}

// TestAPITables: each generated table is what the code says now.
func TestAPITables(t *testing.T) {
	for _, a := range apiTables {
		syncGenerated(t, a.page, a.dir+" "+a.typ, "APITables", renderFields(t, goDoc(t, a.dir), a.typ))
	}
	for _, d := range defaultsTables {
		syncGenerated(t, d.page, d.dir+" defaults", "APITables", renderDefaults(t, goDoc(t, d.dir)))
	}
}

// TestAPIFieldsDocumented: every exported field of the option and report
// structs, and every exported method of the cache and its manager, is named
// on its page in backquotes (alone or qualified: `Options.Prefault`), so
// none is added without its page saying so.
func TestAPIFieldsDocumented(t *testing.T) {
	named := func(page string) map[string]bool {
		out := map[string]bool{}
		// Code blocks name what they hold; inline code is paired outside them.
		fence := regexp.MustCompile("(?s)```.*?```")
		text := readPage(t, page)
		code := append(fence.FindAllString(text, -1), regexp.MustCompile("`([^`]+)`").FindAllString(fence.ReplaceAllString(text, ""), -1)...)
		for _, c := range code {
			for _, w := range regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`).FindAllString(c, -1) {
				out[w] = true
			}
		}
		return out
	}
	check := func(page, what string, names []string) {
		have := named(page)
		var missing []string
		for _, n := range names {
			if !have[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s does not name %s %v", page, what, missing)
		}
	}
	for _, a := range apiTables {
		var names []string
		for _, g := range structFields(t, goDoc(t, a.dir), a.typ) {
			names = append(names, g.names...)
		}
		check(a.page, "the fields of "+a.typ, names)
	}
	c := goDoc(t, "impl/cache")
	for _, typ := range []string{"Cache", "Manager"} {
		var names []string
		for _, m := range docType(t, c, typ).Methods {
			names = append(names, m.Name)
		}
		check("cache.md", "the methods of "+typ, names)
	}
}
