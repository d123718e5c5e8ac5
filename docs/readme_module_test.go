package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeProgramBuildsInItsOwnModule is the newcomer's path: the Go
// program README.md shows under "Use it from Go" is written, as is, into a
// module of its own that requires this one through a replace pointing at
// the checkout, built with the go command (offline: the module cache this
// repository's build filled), and run twice. The second run must find the
// first one's packing in the file. Skipped only where no go command is on
// PATH.
func TestReadmeProgramBuildsInItsOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: not in -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)## Use it from Go\n.*?```go\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, m, "README.md has no Go program under \"Use it from Go\"")
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	modPath := regexp.MustCompile(`(?m)^module (\S+)`).FindSubmatch(gomod)
	goLine := regexp.MustCompile(`(?m)^go \S+`).Find(gomod)
	require.NotNil(t, modPath)

	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("main.go", string(m[1]))
	write("go.mod", "module example.com/adopter\n\n"+string(goLine)+"\n\nrequire "+string(modPath[1])+" v0.0.0\n\nreplace "+string(modPath[1])+" => "+root+"\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	write("go.sum", string(sum))

	bin := filepath.Join(dir, "adopter")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command(gobin, "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build of README's program:\n%s", out)

	run := func() string {
		cmd := exec.Command(bin)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	first, second := run(), run()
	require.True(t, strings.HasPrefix(first, "load=missing"), first)
	require.Contains(t, first, "commits=1")
	require.True(t, strings.HasPrefix(second, "load=ok"), second)
	require.Contains(t, second, "hits=1 misses=0")
	require.Contains(t, second, "commits=0")
}
