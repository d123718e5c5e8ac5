package lincheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/anishathalye/porcupine"
)

// ErrNotLinearizable is matched by the error Check returns for an illegal
// history.
var ErrNotLinearizable = errors.New("lincheck: history is not linearizable")

// ErrUndecided is matched by the error Check returns when porcupine ran out
// of time. It is a failure, never a pass: shrink the history (fewer
// operations or clients, more partitions) or raise the timeout.
var ErrUndecided = errors.New("lincheck: check timed out undecided")

// CheckOptions configure Check.
type CheckOptions struct {
	// Timeout bounds porcupine's search; 0 means DefaultTimeout.
	Timeout time.Duration
	// ArtifactDir receives the HTML visualization of an illegal history;
	// $XPWC_ARTIFACTS, when set, takes precedence. "" with no
	// $XPWC_ARTIFACTS means the system temp directory.
	ArtifactDir string
	// Name prefixes the visualization's file name.
	Name string

	_ struct{}
}

// DefaultTimeout is the check timeout when none is given.
const DefaultTimeout = 30 * time.Second

// Report is what a check found and cost.
type Report struct {
	Result     porcupine.CheckResult
	Ops        int
	Partitions int
	Duration   time.Duration
	// Visualization is the path of the HTML file written for an illegal
	// history.
	Visualization string
}

// Check checks history against m within opts.Timeout. It returns an error
// matching ErrNotLinearizable (naming the visualization file) or
// ErrUndecided, or nil when porcupine found a linearization.
func Check(m porcupine.Model, history []porcupine.Operation, opts CheckOptions) (Report, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rep := Report{Ops: len(history), Partitions: 1}
	if m.Partition != nil {
		rep.Partitions = len(m.Partition(history))
	}
	start := time.Now()
	rep.Result = porcupine.CheckOperationsTimeout(m, history, timeout)
	rep.Duration = time.Since(start)
	switch rep.Result {
	case porcupine.Ok:
		return rep, nil
	case porcupine.Unknown:
		return rep, fmt.Errorf("%w: %d operations in %d partitions after %v", ErrUndecided, rep.Ops, rep.Partitions, rep.Duration)
	}
	// Illegal: run again verbosely for the partial linearizations the
	// visualization shows. The first run stopped at the first illegal
	// partition, so this one is not much slower.
	res, info := porcupine.CheckOperationsVerbose(m, history, timeout)
	path, err := writeVisualization(m, info, opts)
	if err != nil {
		return rep, fmt.Errorf("%w (%d operations; verbose rerun %s; visualization not written: %v)", ErrNotLinearizable, rep.Ops, res, err)
	}
	rep.Visualization = path
	return rep, fmt.Errorf("%w: %d operations in %d partitions; visualization %s", ErrNotLinearizable, rep.Ops, rep.Partitions, path)
}

func writeVisualization(m porcupine.Model, info porcupine.LinearizationInfo, opts CheckOptions) (string, error) {
	dir := os.Getenv("XPWC_ARTIFACTS")
	if dir == "" {
		dir = opts.ArtifactDir
	}
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := opts.Name
	if name == "" {
		name = "lincheck"
	}
	f, err := os.CreateTemp(dir, name+"-*.html")
	if err != nil {
		return "", err
	}
	path := f.Name()
	if err := porcupine.Visualize(m, info, f); err != nil {
		_ = f.Close()
		return path, err
	}
	return filepath.Clean(path), f.Close()
}
