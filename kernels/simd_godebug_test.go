//go:build amd64

package kernels

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// GODEBUG=cpu.avx512f=off (read by golang.org/x/sys/cpu at start-up) takes
// a process to the AVX2 path on an AVX-512 CPU, which is how the AVX2
// figures are measured on such a machine (docs/kernels.md). The child
// process prints the default kernel's path.
func TestGODEBUGCapsTheSIMDPath(t *testing.T) {
	if os.Getenv("XPWC_PRINT_COMPUTE_PATH") == "1" {
		os.Stdout.WriteString("path=" + NewRegistry().Default().ComputePath() + "\n")
		return
	}
	if cpuSIMD < simdAVX512 {
		t.Skip("needs an AVX-512 CPU")
	}
	for godebug, want := range map[string]string{"cpu.avx512f=off": "avx2-fma", "cpu.avx2=off": "go", "": "avx512f"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGODEBUGCapsTheSIMDPath$")
		cmd.Env = append(os.Environ(), "XPWC_PRINT_COMPUTE_PATH=1", "GODEBUG="+godebug)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.True(t, strings.Contains(string(out), "path="+want+"\n"), "GODEBUG=%s: want path %s, got %s", godebug, want, out)
	}
}
