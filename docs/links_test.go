// Package docs holds the design reference; its test checks that the
// reference stands alone: every link and file reference resolves inside
// the repository, from the pages and from the Go comments alike.
package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// markdown lists the files checked: the docs and the README.
func markdown(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(files, "../README.md")
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	// A repository path in backquotes: a directory part and a file name
	// with an extension we keep (Go, docs, scenarios, scripts).
	pathRE = regexp.MustCompile("`((?:cmd|docs|faultinject|fuzz|impl|kernels|model|sim|spec)/[A-Za-z0-9_./-]+\\.(?:go|md|txtar|txt))`")
	// What only the private notes this project grew from had: they are not
	// in the repository, so a reader cannot follow them.
	outsideRE = regexp.MustCompile(`DESIGN\.md|research notes|executorch-cache\.md|testing-and-perf-facts|§`)
	// A section cited by its heading: docs/cache.md, "Staged writes".
	sectionRE = regexp.MustCompile(`((?:docs/)?[a-z-]+\.md),?\s+"([^"]+)"`)
	// A file a Go comment names: any word ending in .md, or a repository
	// path with a directory part.
	commentFileRE = regexp.MustCompile(`(?:^|[\s(\x60])([A-Za-z0-9_./-]+\.md|(?:cmd|docs|faultinject|fuzz|impl|internal|kernels|model|sim|spec|conform)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.(?:go|txtar|txt))\b`)
)

// sectionProblems returns what is wrong with the sections text cites by
// heading (file, then the heading's words in quotes): the file must be
// one of docs/ and have a heading that starts with the quoted words.
func sectionProblems(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	for _, m := range sectionRE.FindAllStringSubmatch(text, -1) {
		path := filepath.Join(".", filepath.Base(m[1]))
		if _, err := os.Stat(path); err != nil {
			out = append(out, m[1]+" is not a page of docs/")
			continue
		}
		want := strings.Join(strings.Fields(m[2]), " ")
		found := false
		for _, h := range headingRE.FindAllStringSubmatch(readPage(t, path), -1) {
			if strings.HasPrefix(strings.ToLower(strings.ReplaceAll(h[1], "`", "")), strings.ToLower(want)) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, m[1]+` has no heading "`+want+`"`)
		}
	}
	return out
}

// anchor is GitHub's anchor for a heading.
func anchor(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.NewReplacer("`", "", "*", "").Replace(h)
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func anchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range headingRE.FindAllStringSubmatch(string(b), -1) {
		out[anchor(m[1])] = true
	}
	return out
}

// TestLinksResolve: every relative link of the docs and the README names a
// file of the repository, and every #anchor a heading of that file.
func TestLinksResolve(t *testing.T) {
	for _, file := range markdown(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, frag, _ := strings.Cut(link, "#")
			path := file
			if target != "" {
				path = filepath.Join(filepath.Dir(file), target)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: %v", file, link, err)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[frag] {
				t.Errorf("%s: link %q: no heading with anchor #%s in %s", file, link, frag, path)
			}
		}
	}
}

// TestFileReferencesResolve: every repository path the docs quote exists,
// and nothing points at notes outside the repository.
func TestFileReferencesResolve(t *testing.T) {
	for _, file := range markdown(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pathRE.FindAllStringSubmatch(string(b), -1) {
			if strings.ContainsAny(m[1], "*<>") {
				continue // a pattern, not a path
			}
			if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
				t.Errorf("%s: `%s` is not in the repository", file, m[1])
			}
		}
		// Any page named in backquotes, with or without a directory.
		for _, m := range regexp.MustCompile("`([A-Za-z0-9_./-]+\\.md)`").FindAllStringSubmatch(string(b), -1) {
			if !resolves(file, m[1]) {
				t.Errorf("%s: `%s` is not in the repository", file, m[1])
			}
		}
		for i, line := range strings.Split(string(b), "\n") {
			if outsideRE.MatchString(line) {
				t.Errorf("%s:%d: refers to notes outside the repository: %s", file, i+1, strings.TrimSpace(line))
			}
		}
		for _, p := range sectionProblems(t, string(b)) {
			t.Errorf("%s: cites a section that is not there: %s", file, p)
		}
	}
}

// TestGoCommentReferencesResolve: what the Go comments of the module cite
// (test files included) is in the repository, as for the pages: a file
// named in a comment exists (next to the Go file, under docs/ or from the
// repository root), a section cited by heading is a heading of its page,
// and nothing points at notes outside the repository.
func TestGoCommentReferencesResolve(t *testing.T) {
	checked := 0
	walkGoFiles(t, true, func(path string, f *ast.File) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, cg := range f.Comments {
			text := strings.Join(strings.Fields(cg.Text()), " ")
			line := 1 + strings.Count(string(src[:cg.Pos()-f.FileStart]), "\n")
			where := fmt.Sprintf("%s:%d", path, line)
			if outsideRE.MatchString(text) {
				t.Errorf("%s: refers to notes outside the repository: %s", where, outsideRE.FindString(text))
			}
			for _, m := range commentFileRE.FindAllStringSubmatch(text, -1) {
				checked++
				if !strings.ContainsAny(m[1], "*<>") && !resolves(path, m[1]) {
					t.Errorf("%s: %s is not in the repository", where, m[1])
				}
			}
			for _, p := range sectionProblems(t, text) {
				t.Errorf("%s: cites a section that is not there: %s", where, p)
			}
		}
	})
	if checked < 100 {
		t.Errorf("checked %d file references in Go comments; the scan lost its way", checked)
	}
}

// resolves reports whether name, cited in the Go file at path, is a file
// next to it, under docs/ or at the repository root.
func resolves(path, name string) bool {
	for _, p := range []string{filepath.Join(filepath.Dir(path), name), filepath.Join(".", name), filepath.Join("..", name)} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// TestREADMEExamplesExist: every example the README's "Use it from Go"
// names is an Example function of that package's tests, so the reader's
// path from the README to a runnable example does not end in nothing.
func TestREADMEExamplesExist(t *testing.T) {
	_, sec, ok := strings.Cut(readPage(t, "../README.md"), "## Use it from Go")
	if !ok {
		t.Fatal(`README.md has no "## Use it from Go" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	named := regexp.MustCompile("\\| `([a-z/]+)` `(Example\\w*)` \\(`([a-z/_]+\\.go)`\\)").FindAllStringSubmatch(sec, -1)
	if len(named) < 2 {
		t.Fatalf("README's Use it from Go names %d examples; the test reads rows like | `impl/cache` `Example` (`impl/cache/example_test.go`)", len(named))
	}
	for _, m := range named {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", m[3]), nil, 0)
		found := err == nil && strings.HasPrefix(m[3], m[1]+"/")
		if found {
			found = false
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == m[2] && fn.Recv == nil {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("README names %s's %s in %s; there is no such example", m[1], m[2], m[3])
		}
	}
}
