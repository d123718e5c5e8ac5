//go:build unix

package proctest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache/proctest"
)

// faultEnv makes a child fault on purpose before its job, so that the
// harness is seen to report what it must: a SIGBUS, or a SIGKILL the
// parent did not send, is a failed child.
const faultEnv = "XPWC_PROCTEST_FAULT"

// childFault runs in a child when faultEnv is set.
func childFault() {
	switch os.Getenv(faultEnv) {
	case "sigbus":
		// Map two pages of a file, cut the file, touch the second page:
		// the access the lock protocol exists to prevent (G6).
		j, err := proctest.ParseJob(os.Getenv(proctest.ChildEnv))
		if err != nil {
			os.Exit(3)
		}
		f, err := os.Create(j.Path + ".sigbus")
		if err != nil {
			os.Exit(3)
		}
		_ = f.Truncate(8192)
		b, err := syscall.Mmap(int(f.Fd()), 0, 8192, syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			os.Exit(3)
		}
		_ = f.Truncate(0)
		fmt.Fprintln(os.Stderr, "read after truncation:", b[4096])
		os.Exit(0) // not reached: the read faults
	case "selfkill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
}

func TestHarnessReportsFaults(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range []struct{ fault, want string }{
		{"sigbus", "took SIGBUS"},
		{"selfkill", "signal: killed"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Setenv(faultEnv, tc.fault)
			c, err := proctest.Start(exe, proctest.Job{Path: filepath.Join(t.TempDir(), "c"), Launches: 1})
			require.NoError(t, err)
			o := c.Wait()
			require.Equal(t, proctest.ExitFailed, o.Exit)
			require.ErrorIs(t, o.Err, proctest.ErrChildFailed)
			require.Contains(t, o.Err.Error(), tc.want)
		})
	}
	// And a SIGKILL the parent sends is expected, not a failure.
	c, err := proctest.Start(exe, proctest.Job{Path: filepath.Join(t.TempDir(), "c"), Launches: 1000})
	require.NoError(t, err)
	<-c.Reported(1)
	c.Kill()
	o := c.Wait()
	require.NoError(t, o.Err)
	require.Equal(t, proctest.ExitKilled, o.Exit)
	require.NotEmpty(t, o.Reports)
}
