package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestErrorConvention: every sentinel error of the module (a package-level
// variable set with errors.New) reads "PACKAGE: message", so the messages a
// user sees start the same way everywhere and say which package speaks;
// errors built around a sentinel keep its prefix by wrapping it (%w), which
// also keeps them comparable with errors.Is.
func TestErrorConvention(t *testing.T) {
	checked := 0
	walkGoFiles(t, false, func(path string, f *ast.File) {
		if f.Name.Name == "main" {
			return // simrun prints its own errors behind "simrun CMD: "
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, v := range vs.Values {
					call, ok := v.(*ast.CallExpr)
					if !ok || len(call.Args) != 1 {
						continue
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "New" || !isIdent(sel.X, "errors") {
						continue
					}
					lit, ok := call.Args[0].(*ast.BasicLit)
					if !ok {
						continue
					}
					msg, _ := strconv.Unquote(lit.Value)
					checked++
					if !strings.HasPrefix(msg, f.Name.Name+": ") {
						t.Errorf("%s: %s = %q does not start with %q", path, vs.Names[i].Name, msg, f.Name.Name+": ")
					}
				}
			}
		}
	})
	if checked < 20 {
		t.Errorf("checked only %d sentinel errors; the walk lost its way", checked)
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// TestFormatErrorNamesDocumented: the names a user reads in a parser's error
// are the names docs/format.md uses. Every field name the spec package can
// put in a FormatError (the literal passed to ferr, readFull, window.at or
// window.sumRest) appears in format.md, as a field of one of its tables or
// in backquotes; every sentinel of spec/errors.go appears in backquotes; and
// every ErrX format.md names is a sentinel of the package.
func TestFormatErrorNamesDocumented(t *testing.T) {
	doc, err := os.ReadFile("format.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	// Table rows "| offset | size | field [type] | ...": the field's name.
	row := regexp.MustCompile(`(?m)^\| [0-9][^|]* \| [^|]+ \| ` + "`?" + `([a-z_]+)`)
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}

	fields := map[string]string{} // name -> where
	sentinels := map[string]bool{}
	fset, files := parseSpec(t)
	for _, f := range files {
		path := fset.Position(f.Package).Filename
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if at, ok := fieldArg[callName(n.Fun)]; ok && at < len(n.Args) {
					if lit, ok := n.Args[at].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						name, _ := strconv.Unquote(lit.Value)
						fields[name] = fset.Position(lit.Pos()).String()
					}
				}
			case *ast.ValueSpec:
				if filepath.Base(path) == "errors.go" {
					for _, id := range n.Names {
						if strings.HasPrefix(id.Name, "Err") {
							sentinels[id.Name] = true
						}
					}
				}
			}
			return true
		})
	}
	if len(fields) < 20 || len(sentinels) < 15 {
		t.Fatalf("found %d field names and %d sentinels; the scan lost its way", len(fields), len(sentinels))
	}
	for name, where := range fields {
		if !documented[name] {
			t.Errorf("%s: field %q is not in docs/format.md", where, name)
		}
	}
	// The other way: every name the page's paragraph on FormatError.Field
	// gives as a Field value is one a parser can report.
	para := regexp.MustCompile("(?s)A `FormatError`'s `Field` is.*?\n\n").Find(doc)
	named := regexp.MustCompile("`([a-z0-9_]+)`").FindAllSubmatch(para, -1)
	if len(named) < 10 {
		t.Fatalf("docs/format.md: the paragraph on FormatError.Field names %d fields; the scan lost its way", len(named))
	}
	for _, m := range named {
		if _, ok := fields[string(m[1])]; !ok {
			t.Errorf("docs/format.md gives %q as a FormatError field; no parser reports it", m[1])
		}
	}
	for name := range sentinels {
		if !documented[name] && !documented[name+"`"] {
			t.Errorf("sentinel %s is not in docs/format.md", name)
		}
	}
	for _, m := range regexp.MustCompile(`\bErr[A-Z][A-Za-z]+\b`).FindAllString(string(doc), -1) {
		if !sentinels[m] {
			t.Errorf("docs/format.md names %s, which spec/errors.go does not define", m)
		}
	}
}

// fieldArg is the argument position of the field name in the spec
// package's calls that name a field.
var fieldArg = map[string]int{"ferr": 1, "readFull": 3, "at": 2, "sumRest": 0}

func callName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// walkGoFiles parses every Go file of the module, comments included (test
// files too when tests is set; testdata and hidden directories skipped),
// and hands it to fn.
func walkGoFiles(t *testing.T, tests bool, fn func(path string, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || !tests && strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		fn(path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
