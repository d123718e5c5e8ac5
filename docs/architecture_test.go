package docs

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/xpwc/xpwc/"

// goList returns each package of the module (relative path) with the
// module packages and the standard or external packages it imports
// (tests excluded).
func goList(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var imports []string
		for _, imp := range f[1:] {
			imports = append(imports, strings.TrimPrefix(imp, module))
		}
		pkgs[strings.TrimPrefix(f[0], module)] = imports
	}
	return pkgs
}

// TestArchitectureListsEveryPackage: docs/architecture.md has one row per
// package of the module, no more.
func TestArchitectureListsEveryPackage(t *testing.T) {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9/-]+)` \\|").FindAllStringSubmatch(string(b), -1) {
		doc = append(doc, m[1])
	}
	var pkgs []string
	for p := range goList(t) {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	slices.Sort(doc)
	if !slices.Equal(pkgs, doc) {
		t.Errorf("docs/architecture.md lists %v\nthe module has %v", doc, pkgs)
	}
}

// TestDependencyRules: the rules under the table of docs/architecture.md.
func TestDependencyRules(t *testing.T) {
	io := []string{"os", "syscall", "golang.org/x/sys/unix"}
	under := func(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }
	for p, imports := range goList(t) {
		for _, imp := range imports {
			internal := !strings.Contains(imp, ".") && (under(imp, "spec") || under(imp, "model") || under(imp, "impl") ||
				under(imp, "kernels") || under(imp, "faultinject") || under(imp, "sim") || under(imp, "internal") ||
				under(imp, "cmd") || imp == "fuzz" || imp == "docs")
			switch {
			case p == "spec" && (internal && imp != "internal/rawmem" || slices.Contains(io, imp)):
				t.Errorf("spec imports %s", imp)
			case (p == "model" || p == "model/explore") && (internal && !under(imp, "spec") && !under(imp, "model") || slices.Contains(io, imp)):
				t.Errorf("%s imports %s", p, imp)
			case under(p, "model") && under(imp, "impl"), under(p, "impl") && under(imp, "model"):
				t.Errorf("%s imports %s: model and impl stay independent", p, imp)
			case under(imp, "cmd") && !under(p, "cmd"), imp == "fuzz", imp == "docs":
				t.Errorf("%s imports %s", p, imp)
			}
		}
	}
}

// TestUnsafeInOneRoom: outside tests, only internal/rawmem imports unsafe,
// and in kernels only the assembly glue (simd_amd64.go) does; every other
// package views memory through rawmem's documented functions
// (architecture.md).
func TestUnsafeInOneRoom(t *testing.T) {
	for p, imports := range goList(t) {
		if slices.Contains(imports, "unsafe") && p != "internal/rawmem" && p != "kernels" {
			t.Errorf("%s imports unsafe: use internal/rawmem", p)
		}
	}
	files, err := filepath.Glob("../kernels/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || filepath.Base(name) == "simd_amd64.go" {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == `"unsafe"` {
				t.Errorf("%s imports unsafe: only the assembly glue may", name)
			}
		}
	}
}
