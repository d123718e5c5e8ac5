package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
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
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil // simrun prints its own errors behind "simrun CMD: "
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
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Errorf("checked only %d sentinel errors; the walk lost its way", checked)
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
