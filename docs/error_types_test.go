package docs

import (
	"go/ast"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestErrorTypesDocumented: every error type docs/ names in backquotes
// (`*FormatError`, `*sim.DivergenceError`, ...) is a type of the module (of
// the package it is qualified with), and where a page spells out its fields
// (`*spec.FormatError{Off, Field, Val, Err}`) they are exactly the struct's
// fields, so a field added, renamed or dropped fails here until the page
// says the same. The other way, every exported error type of a library
// package is named on some page.
func TestErrorTypesDocumented(t *testing.T) {
	types := map[string][]string{} // "pkg.Name" -> struct field names
	walkGoFiles(t, false, func(path string, f *ast.File) {
		if f.Name.Name == "main" {
			return // a command's own errors are its output
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !strings.HasSuffix(ts.Name.Name, "Error") {
				return true
			}
			var fields []string
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, fl := range st.Fields.List {
					for _, id := range fl.Names {
						fields = append(fields, id.Name)
					}
					if len(fl.Names) == 0 { // embedded: named by its type
						ty := fl.Type
						if s, ok := ty.(*ast.StarExpr); ok {
							ty = s.X
						}
						if s, ok := ty.(*ast.SelectorExpr); ok {
							ty = s.Sel
						}
						if id, ok := ty.(*ast.Ident); ok {
							fields = append(fields, id.Name)
						}
					}
				}
			}
			types[f.Name.Name+"."+ts.Name.Name] = fields
			return true
		})
	})
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`\\*?(?:([a-z]+)\\.)?([A-Z][A-Za-z]*Error|Error)(?:\\{([^}]*)\\})?`")
	checked := 0
	documented := map[string]bool{}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(b), -1) {
			pkg, name, spelled := m[1], m[2], m[3]
			if strings.HasPrefix(name, "Test") || pkg+"."+name == "runtime.Error" {
				continue // a test's name; Go's own runtime.Error
			}
			var found []string
			for k := range types {
				p, n, _ := strings.Cut(k, ".")
				if n == name && (pkg == "" || p == pkg) {
					found = append(found, k)
				}
			}
			switch {
			case len(found) == 1:
				documented[found[0]] = true
			}
			switch {
			case len(found) == 0:
				t.Errorf("docs/%s names %s: no such error type in the module", page, m[0])
				continue
			case spelled == "":
				checked++
				continue
			case len(found) > 1:
				t.Errorf("docs/%s names %s: ambiguous (%v); qualify it", page, m[0], found)
				continue
			}
			var doc []string
			for _, f := range strings.Split(spelled, ",") {
				f, _, _ = strings.Cut(f, ":")
				doc = append(doc, strings.TrimSpace(f))
			}
			code := slices.Clone(types[found[0]])
			slices.Sort(doc)
			slices.Sort(code)
			if !slices.Equal(doc, code) {
				t.Errorf("docs/%s spells %s with fields %v; %s has %v", page, m[0], doc, found[0], code)
			}
			checked++
		}
	}
	for k := range types {
		if _, name, _ := strings.Cut(k, "."); ast.IsExported(name) && !documented[k] {
			t.Errorf("error type %s is named on no page of docs/", k)
		}
	}
	if checked < 15 {
		t.Errorf("checked only %d error types named in docs/; the scan lost its way", checked)
	}
}
