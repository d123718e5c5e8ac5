package main

import (
	"bytes"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHelpListsEveryFlag: `simrun CMD --help` prints on stdout with exit 0,
// and its usage lines (the synopsis before the flag list) name every flag
// the command defines.
func TestHelpListsEveryFlag(t *testing.T) {
	for _, name := range commandNames() {
		for _, help := range []string{"-h", "--help"} {
			synopsis, flags := helpOf(t, name, help)
			for _, f := range flags {
				require.Regexp(t, `(^|[\s\[|])--?`+regexp.QuoteMeta(f)+`([\s\]|=]|$)`, synopsis,
					"simrun %s: the usage lines do not mention --%s", name, f)
			}
		}
	}
	var out bytes.Buffer
	require.Equal(t, exitOK, run(&env{stdout: &out, stderr: &out}, []string{"help", "launch"}))
	require.Contains(t, out.String(), "usage: simrun launch")
}

// TestUnknownCommandSuggests: a mistyped command is a usage error that
// names the closest command.
func TestUnknownCommandSuggests(t *testing.T) {
	for typo, want := range map[string]string{"laucnh": "launch", "inspcet": "inspect", "exp": "explore", "replya": "replay"} {
		var out, errOut bytes.Buffer
		require.Equal(t, exitUsage, run(&env{stdout: &out, stderr: &errOut}, []string{typo}))
		require.Contains(t, errOut.String(), `did you mean "`+want+`"?`, typo)
	}
	var out, errOut bytes.Buffer
	require.Equal(t, exitUsage, run(&env{stdout: &out, stderr: &errOut}, []string{"zzzzzzzz"}))
	require.NotContains(t, errOut.String(), "did you mean")
}

func commandNames() []string {
	names := make([]string, 0, len(commands()))
	for n := range commands() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// helpOf runs `simrun NAME HELP` and returns its usage lines and the
// flags its flag set defines (from the flag list the usage prints).
func helpOf(t *testing.T, name, help string) (synopsis string, flags []string) {
	synopsis, defs := helpDefaults(t, name, help)
	for _, d := range defs {
		flags = append(flags, d.name)
	}
	return synopsis, flags
}

// flagDefault is a flag and its default as the usage prints it: package
// flag prints "(default X)" after a flag's usage unless X is the zero value
// of its type, which is "" here (false, 0 and "" alike).
type flagDefault struct{ name, def string }

// helpDefaults is helpOf with each flag's default.
func helpDefaults(t *testing.T, name, help string) (synopsis string, flags []flagDefault) {
	t.Helper()
	flagLine := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	var out, errOut bytes.Buffer
	code := run(&env{stdout: &out, stderr: &errOut}, []string{name, help})
	require.Equal(t, exitOK, code, "%s %s", name, help)
	require.Empty(t, errOut.String(), "%s %s wrote to stderr", name, help)
	text := out.String()
	require.True(t, strings.HasPrefix(text, "usage: simrun "+name), "%s: %q", name, text)
	loc := flagLine.FindStringIndex(text)
	require.NotNil(t, loc, "%s lists no flags", name)
	locs := flagLine.FindAllStringSubmatchIndex(text, -1)
	def := regexp.MustCompile(`\(default "?([^"()]*)"?\)\s*$`)
	for i, m := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		d := flagDefault{name: text[m[2]:m[3]]}
		if dm := def.FindStringSubmatch(text[m[1]:end]); dm != nil {
			d.def = dm[1]
		}
		flags = append(flags, d)
	}
	return text[:loc[0]], flags
}

// TestManualListsEveryFlag: docs/simrun.md's section of each command names
// every flag the command's flag set defines, and no flag it does not
// define, so a flag added, renamed or dropped fails here until the manual
// says the same.
func TestManualListsEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../docs/simrun.md")
	require.NoError(t, err)
	sections := map[string]string{}
	for _, s := range regexp.MustCompile(`(?m)^## `).Split(string(b), -1)[1:] {
		title, body, _ := strings.Cut(s, "\n")
		sections[strings.TrimSpace(title)] = body
	}
	// A flag as the manual writes it: --name. A section may name another
	// command's flag (a launch that a bench runs), but not one that none
	// defines.
	written := regexp.MustCompile(`(?:^|[^\w-])--([a-z][a-z0-9-]*)`)
	defined := map[string]bool{}
	for _, name := range commandNames() {
		_, flags := helpOf(t, name, "--help")
		for _, f := range flags {
			defined[f] = true
		}
	}
	for _, name := range commandNames() {
		body, ok := sections[name]
		if !ok {
			t.Errorf("docs/simrun.md has no section ## %s", name)
			continue
		}
		_, flags := helpOf(t, name, "--help")
		for _, f := range flags {
			if !regexp.MustCompile(`(^|[^\w-])--?` + regexp.QuoteMeta(f) + `([^\w-]|$)`).MatchString(body) {
				t.Errorf("docs/simrun.md, ## %s, does not name --%s", name, f)
			}
		}
		for _, m := range written.FindAllStringSubmatch(body, -1) {
			if !defined[m[1]] {
				t.Errorf("docs/simrun.md, ## %s, names --%s, which no command defines", name, m[1])
			}
		}
		// A flag table's default column says what the flag set's default is.
		_, defs := helpDefaults(t, name, "--help")
		for _, m := range regexp.MustCompile("(?m)^\\| `--([a-z-]+)` \\| ([^|]+) \\|").FindAllStringSubmatch(body, -1) {
			for _, d := range defs {
				if d.name == m[1] && !sameDefault(m[2], d.def) {
					t.Errorf("docs/simrun.md, ## %s, gives --%s the default %q; its flag set's is %q", name, m[1], strings.TrimSpace(m[2]), d.def)
				}
			}
		}
	}
}

// sameDefault reports whether a manual's default cell states def: its
// first word, without backquotes, with on and off for true and false. A
// flag whose default is the zero value may be described in words
// ("required", "registry default").
func sameDefault(cell, def string) bool {
	cell = strings.TrimSpace(cell)
	w := strings.Trim(strings.Fields(cell)[0], "`")
	switch w {
	case "on":
		w = "true"
	case "off":
		w = "false"
	}
	if def == "" {
		_, err := strconv.ParseInt(w, 10, 64)
		return w == "false" || w == "0" || w != "true" && err != nil && !strings.HasPrefix(cell, "`")
	}
	return w == def
}
