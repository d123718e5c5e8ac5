package cache_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The package comment shows the Example's code so that go doc prints it; a
// change to the Example that the comment does not follow fails here, so
// the snippet a reader copies is one go test runs.
func TestPackageDocShowsTheExample(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	ex, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	body := string(ex)
	var shown int
	for _, line := range strings.Split(string(doc), "\n") {
		code, ok := strings.CutPrefix(line, "//\t")
		if !ok || strings.TrimSpace(code) == "..." {
			continue
		}
		code = strings.TrimSpace(code)
		if strings.HasPrefix(code, "c, err := cache.Open(") {
			code = "c, err := cache.Open(cache.Options{Path:" // the Example's path is a temporary directory's
		}
		require.Contains(t, body, code, "doc.go shows a line the Example does not have")
		shown++
	}
	require.GreaterOrEqual(t, shown, 8, "the package comment shows the Example")
}
