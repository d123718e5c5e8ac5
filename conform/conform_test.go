package conform

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce  sync.Once
	adapterBin string
	buildErr   error
)

// adapter builds cmd/conform-adapter once per test binary, so every test
// drives a real subprocess.
func adapter(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xpwc-conform-adapter-")
		if err != nil {
			buildErr = err
			return
		}
		adapterBin = filepath.Join(dir, "conform-adapter")
		out, err := exec.Command("go", "build", "-o", adapterBin, "github.com/xpwc/xpwc/cmd/conform-adapter").CombinedOutput()
		if err != nil {
			buildErr = err
			adapterBin = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build cmd/conform-adapter: %v\n%s", buildErr, adapterBin)
	}
	return adapterBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if adapterBin != "" && buildErr == nil {
		_ = os.RemoveAll(filepath.Dir(adapterBin))
	}
	os.Exit(code)
}

// TestReferenceConforms runs the scenario suite through the Go adapter:
// every scenario that can run through the protocol holds.
func TestReferenceConforms(t *testing.T) {
	cmd := Command{Argv: []string{adapter(t)}}
	rep, err := Run(Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, s := range rep.Scenarios {
		switch s.Verdict {
		case Holds:
			ran++
		case Skipped:
		default:
			t.Errorf("%s: %s: %s", s.Name, s.Verdict, s.Reason)
		}
	}
	if ran < 20 {
		t.Errorf("only %d scenarios ran through the adapter", ran)
	}
	if !rep.OK() {
		t.Errorf("report not OK")
	}
	t.Logf("%d scenarios held; checks: %v", ran, summarize(rep.Checks))
}

func summarize(cs []Check) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.ID + "=" + c.Verdict + " ")
	}
	return b.String()
}
