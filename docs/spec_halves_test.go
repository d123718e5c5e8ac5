package docs

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// spec holds two subjects in one package: the bytes on disk and the
// lifecycle. docs/architecture.md says why it stays one package; the two
// tests below keep what it says true.

// lifecycleFile reports whether a non-test file of spec belongs to the
// lifecycle half (operations, results, outcomes, guarantees, invariants,
// verification policies); every other file is the on-disk format.
func lifecycleFile(name string) bool {
	return strings.HasPrefix(name, "lifecycle") || name == "guarantees.go" || name == "invariants.go" || name == "verify_policy.go"
}

// halfName names a half for messages and for the table of the page.
func halfName(life bool) string {
	if life {
		return "lifecycle"
	}
	return "format"
}

// parseSpec parses spec's non-test files into one file set.
func parseSpec(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	return parsePackage(t, "spec", 0)
}

// parsePackage parses the non-test files of the module's package in dir
// (relative to the repository root) that build for this platform (spec's
// crc_amd64.go and crc_other.go declare the same names) into one file set.
func parsePackage(t *testing.T, dir string, mode parser.Mode) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(filepath.Dir(p), filepath.Base(p)); err != nil || !ok {
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, mode|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// checkSpec type-checks spec's non-test files and returns the package, the
// file set and every use of an identifier.
func checkSpec(t *testing.T) (*types.Package, *token.FileSet, map[*ast.Ident]types.Object) {
	t.Helper()
	fset, files := parseSpec(t)
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check(module+"spec", fset, files, info)
	if err != nil {
		t.Fatalf("type-checking spec: %v", err)
	}
	return pkg, fset, info.Uses
}

// TestSpecHalvesApart: no file of one half of spec uses an identifier
// (type, function, constant, variable, method or field) declared in a file
// of the other half, so moving the lifecycle into a package of its own stays
// a move of files, whenever the dependents make that worth it.
func TestSpecHalvesApart(t *testing.T) {
	pkg, fset, uses := checkSpec(t)
	for id, obj := range uses {
		if obj.Pkg() != pkg {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		decl := filepath.Base(fset.Position(obj.Pos()).Filename)
		if lifecycleFile(from) != lifecycleFile(decl) {
			t.Errorf("%s (%s) uses %s, declared in %s (%s): the halves of spec stay apart",
				fset.Position(id.Pos()), halfName(lifecycleFile(from)), id.Name, decl, halfName(lifecycleFile(decl)))
		}
	}
}

// specUse is what one package (its non-test files) takes from each half.
type specUse struct{ format, lifecycle map[string]bool }

func (u specUse) halves() string {
	switch {
	case len(u.lifecycle) == 0:
		return "format"
	case len(u.format) == 0:
		return "lifecycle"
	}
	return "both"
}

// specDependents reads every Go file of the module that imports spec and
// returns, per package (tests under "PKG (tests)"), the exported names of
// each half it selects.
func specDependents(t *testing.T) map[string]specUse {
	t.Helper()
	pkg, fset, _ := checkSpec(t)
	half := map[string]bool{} // exported name -> lifecycle half
	for _, name := range pkg.Scope().Names() {
		if ast.IsExported(name) {
			half[name] = lifecycleFile(filepath.Base(fset.Position(pkg.Scope().Lookup(name).Pos()).Filename))
		}
	}
	deps := map[string]specUse{}
	walkGoFiles(t, true, func(path string, f *ast.File) {
		local := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == module+"spec" {
				local = "spec"
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			return
		}
		dir, _ := filepath.Rel("..", filepath.Dir(path))
		key := filepath.ToSlash(dir)
		if key == "spec" {
			return // spec's own external tests are not a dependent
		}
		if strings.HasSuffix(path, "_test.go") {
			key += " (tests)"
		}
		u, ok := deps[key]
		if !ok {
			u = specUse{format: map[string]bool{}, lifecycle: map[string]bool{}}
			deps[key] = u
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || !isIdent(sel.X, local) {
				return true
			}
			if life, ok := half[sel.Sel.Name]; ok && life {
				u.lifecycle[sel.Sel.Name] = true
			} else if ok {
				u.format[sel.Sel.Name] = true
			}
			return true
		})
	})
	return deps
}

// TestSpecDependentsTable: the table of docs/architecture.md that says which
// half of spec each importing package's non-test files use (rows "| HALF |
// `pkg`, ... |") is the one the code shows.
// `go test ./docs -run SpecDependents -v` prints the names each package
// takes from each half, tests included.
func TestSpecDependentsTable(t *testing.T) {
	deps := specDependents(t)
	keys := make([]string, 0, len(deps))
	for k := range deps {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := map[string]string{}
	for _, k := range keys {
		u := deps[k]
		t.Logf("%-28s %-9s lifecycle %2d %v", k, u.halves(), len(u.lifecycle), sortedKeys(u.lifecycle))
		t.Logf("%-28s %-9s format    %2d %v", "", "", len(u.format), sortedKeys(u.format))
		if !strings.HasSuffix(k, " (tests)") {
			want[k] = u.halves()
		}
	}
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| (format|lifecycle|both) \| (.+) \|$`).FindAllStringSubmatch(string(b), -1) {
		for _, p := range regexp.MustCompile("`([a-z0-9/-]+)`").FindAllStringSubmatch(m[2], -1) {
			got[p[1]] = m[1]
		}
	}
	for p, h := range want {
		if got[p] != h {
			t.Errorf("docs/architecture.md: %s uses %q of spec, the code shows %q", p, got[p], h)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("docs/architecture.md lists %s as importing spec; it does not", p)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	s := make([]string, 0, len(m))
	for k := range m {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}
