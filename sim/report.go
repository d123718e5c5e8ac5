package sim

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/xpwc/xpwc/spec"
)

// Mismatch is a directive whose output differs from the file's expected
// output: the scenario is out of date (rewrite it) or behaviour changed.
type Mismatch struct {
	Line      int
	Directive string
	Want, Got string
}

// Report is the outcome of one scenario on one backend.
type Report struct {
	Name    string
	Backend Backend
	Steps   int // directives run
	// Err is the first failure: a divergence, a violation of the
	// reference, a known divergence, a harness error. Nil when every
	// directive ran.
	Err        error
	Mismatches []Mismatch
	// Trace is what the run stepped, up to the failure when there is one.
	Trace Trace
}

// OK reports whether the scenario passed.
func (r Report) OK() bool { return r.Err == nil && len(r.Mismatches) == 0 }

// RunScenario replays f under cfg, comparing every directive's output with
// the file's expected output.
func RunScenario(f File, cfg Config) Report {
	rep := Report{Name: f.Name, Backend: cfg.Backend}
	ds, err := ParseScenario(f.Text)
	if se := (*SyntaxError)(nil); errors.As(err, &se) {
		rep.Err = fmt.Errorf("%s:%d: %s", f.Name, se.Line, se.Msg)
		return rep
	}
	if err != nil {
		rep.Err = err
		return rep
	}
	if cfg.Backend == BackendOS && cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "xpwc-sim-")
		if err != nil {
			rep.Err = err
			return rep
		}
		defer func() { _ = os.RemoveAll(dir) }()
		cfg.Dir = dir
	}
	r, err := NewRunner(cfg)
	if err != nil {
		rep.Err = err
		return rep
	}
	defer r.Close()
	if cfg.Trace != nil {
		fmt.Fprintf(cfg.Trace, "== %s (%s)\n", f.Name, cfg.Backend)
		for _, l := range strings.Split(f.Text, "\n") {
			if !strings.HasPrefix(l, "#") {
				break
			}
			fmt.Fprintln(cfg.Trace, l)
		}
	}
	for _, d := range ds {
		got, err := r.Exec(d.Text)
		rep.Steps++
		rep.Trace = r.Trace()
		if err != nil {
			rep.Err = fmt.Errorf("%s:%d: %w", f.Name, d.Line, err)
			return rep
		}
		if strings.TrimRight(got, "\n") != strings.TrimRight(d.Expected, "\n") {
			rep.Mismatches = append(rep.Mismatches, Mismatch{Line: d.Line, Directive: d.Text, Want: d.Expected, Got: got})
		}
	}
	return rep
}

// Known reports the known divergence a report stopped at, if any.
func (r Report) Known() (string, bool) {
	var kd *KnownDivergenceError
	if errors.As(r.Err, &kd) {
		return kd.ID, true
	}
	return "", false
}

func parseOp(line string) (spec.Op, error) { return spec.ParseOp(line) }
