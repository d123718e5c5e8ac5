//go:build linux

package cache

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Reading mapped bytes whose file was truncated under the mapping (a
// foreign writer) is a SIGBUS; the checksum and the prefault's touch report
// it as a failed read instead of killing the process, and read the bytes
// while they are there.
func TestMappedReadsSurviveTruncation(t *testing.T) {
	const n = 4 * touchStride
	path := filepath.Join(t.TempDir(), "f")
	data := make([]byte, n)
	for i := 0; i < n; i += touchStride {
		data[i] = 1
	}
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	defer func() { require.NoError(t, unix.Munmap(b)) }()

	sum, ok := touchMapped(b)
	require.True(t, ok)
	require.Equal(t, uint64(n/touchStride), sum)
	_, ok = crcMapped(b)
	require.True(t, ok)

	require.NoError(t, os.Truncate(path, 0))
	_, ok = touchMapped(b)
	require.False(t, ok, "touch of truncated pages")
	_, ok = crcMapped(b)
	require.False(t, ok, "checksum of truncated pages")
}
