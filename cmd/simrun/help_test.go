package main

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHelpListsEveryFlag: `simrun CMD --help` prints on stdout with exit 0,
// and its usage lines (the synopsis before the flag list) name every flag
// the command defines.
func TestHelpListsEveryFlag(t *testing.T) {
	names := make([]string, 0, len(commands()))
	for n := range commands() {
		names = append(names, n)
	}
	sort.Strings(names)
	flagLine := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	for _, name := range names {
		for _, help := range []string{"-h", "--help"} {
			var out, errOut bytes.Buffer
			code := run(&env{stdout: &out, stderr: &errOut}, []string{name, help})
			require.Equal(t, exitOK, code, "%s %s", name, help)
			require.Empty(t, errOut.String(), "%s %s wrote to stderr", name, help)
			text := out.String()
			require.True(t, strings.HasPrefix(text, "usage: simrun "+name), "%s: %q", name, text)
			loc := flagLine.FindStringIndex(text)
			require.NotNil(t, loc, "%s lists no flags", name)
			synopsis := text[:loc[0]]
			for _, m := range flagLine.FindAllStringSubmatch(text, -1) {
				f := m[1]
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
