package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// eagerCommit commits at every insert: the committed index changes at a
// step that is no commit of the model's.
type eagerCommit struct{ Instance }

func (e eagerCommit) Insert(k spec.Key, r Reservation) error {
	if err := e.Instance.Insert(k, r); err != nil {
		return err
	}
	return e.Instance.Save()
}

func openEager(path string, fsys vfs.FS) (Instance, error) {
	in, err := OpenGo(path, fsys)
	if err != nil {
		return nil, err
	}
	return eagerCommit{in}, nil
}

const launch = `init proc=A program=P1
----
load=missing place=file

lookup proc=A name=w0
----
miss

reserve proc=A name=w0
----
place=file

insert proc=A name=w0
----
ok

finalize proc=A
----
wrote
events: commit
`

// TestFileEachStep: an implementation that commits where the model does
// not is caught at that step when the file is held to the model after
// every step, and only at the next commit otherwise.
func TestFileEachStep(t *testing.T) {
	f := File{Name: "launch", Text: launch}
	for _, each := range []bool{true, false} {
		rep := RunScenario(f, Config{Backend: BackendOS, Dir: t.TempDir(), Open: openEager, FileEachStep: each})
		var d *DivergenceError
		require.True(t, errors.As(rep.Err, &d), "%v", rep.Err)
		if each {
			require.Equal(t, "file", d.What)
			require.True(t, strings.HasPrefix(d.Op, "insert"), d.Op)
		} else {
			require.True(t, strings.HasPrefix(d.Op, "finalize"), d.Op)
		}
	}
	// The in-process cache through the same seam passes.
	rep := RunScenario(f, Config{Backend: BackendOS, Dir: t.TempDir(), Open: OpenGo, FileEachStep: true})
	require.True(t, rep.OK(), "%v", rep.Err)
}

// failingOpener is an implementation that cannot be started.
func failingOpener(string, vfs.FS) (Instance, error) {
	return nil, errors.Join(ErrImplementation, errors.New("adapter would not start"))
}

// TestImplementationFault: an Opener's failure to start an implementation
// is the run's verdict, not a failed init the model would compare.
func TestImplementationFault(t *testing.T) {
	rep := RunScenario(File{Name: "launch", Text: launch}, Config{Backend: BackendOS, Dir: t.TempDir(), Open: failingOpener})
	require.ErrorIs(t, rep.Err, ErrImplementation)
	require.Contains(t, rep.Err.Error(), "would not start")
	_, err := NewRunner(Config{Backend: BackendCrashFS, Open: OpenGo})
	require.Error(t, err, "an opened implementation runs on the os backend only")
}

// neverFinal finalizes but says the program is not finalized.
type neverFinal struct{ Instance }

func (neverFinal) IsFinalized() (bool, error) { return false, nil }

// TestFinalizeMustFinalize: after a finalize that returned, is_finalized
// must say so (XNNPACK asks before it runs); otherwise the finalize failed.
func TestFinalizeMustFinalize(t *testing.T) {
	open := func(path string, fsys vfs.FS) (Instance, error) {
		in, err := OpenGo(path, fsys)
		if err != nil {
			return nil, err
		}
		return neverFinal{in}, nil
	}
	rep := RunScenario(File{Name: "launch", Text: launch}, Config{Backend: BackendOS, Dir: t.TempDir(), Open: open})
	var d *DivergenceError
	require.True(t, errors.As(rep.Err, &d), "%v", rep.Err)
	require.True(t, strings.HasPrefix(d.Op, "finalize"), d.Op)
	require.Contains(t, d.Cache, "is_finalized says false")
}
