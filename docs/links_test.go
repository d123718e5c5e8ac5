// Package docs holds the design reference; its test checks that the
// reference stands alone: every link and file reference resolves inside
// the repository.
package docs

import (
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
	outsideRE = regexp.MustCompile(`DESIGN\.md|research notes|executorch-cache\.md|§`)
)

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
		for i, line := range strings.Split(string(b), "\n") {
			if outsideRE.MatchString(line) {
				t.Errorf("%s:%d: refers to notes outside the repository: %s", file, i+1, strings.TrimSpace(line))
			}
		}
	}
}
