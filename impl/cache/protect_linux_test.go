//go:build linux

package cache_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// Committed bytes are read-only memory: a stray store into them faults
// instead of reaching the committed file (G1, G2). Two places hand out such
// bytes: Finalize turns the regions it commits read-only (mprotect), and a
// load maps committed data read-only. Heap entries are ordinary Go memory,
// which the cache cannot protect; only the file-backed path applies. The
// checks read the kernel's own record (/proc/self/maps) or let a store
// fault in a child process, so they do not depend on file permissions
// (CI may run as root, which may write any file).

// protOf returns the permission field of the mapping of /proc/self/maps
// that holds addr ("r--s", "rw-s", ...).
func protOf(t *testing.T, addr uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		lo, hi, ok := strings.Cut(fields[0], "-")
		require.True(t, ok)
		l, err := strconv.ParseUint(lo, 16, 64)
		require.NoError(t, err)
		h, err := strconv.ParseUint(hi, 16, 64)
		require.NoError(t, err)
		if uint64(addr) >= l && uint64(addr) < h {
			return fields[1]
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("address %#x is in no mapping", addr)
	return ""
}

// protsOf returns the protection of every entry of ks served by c.
func protsOf(t *testing.T, c *cache.Cache, ks []spec.Key) []string {
	t.Helper()
	var out []string
	for _, k := range ks {
		h, hit := c.LookUp(k)
		require.True(t, hit, k.Name())
		b, err := c.Bytes(h)
		require.NoError(t, err)
		out = append(out, protOf(t, uintptrOf(b)))
	}
	return out
}

// Loaded data is mapped read-only (G1: a stray store cannot change what a
// hit serves or what is committed) and shared, on both paths that map
// committed data: the load of InitializeForProgram (the file opened
// read-only) and the merge a writer does when another process committed
// since it loaded (the file opened read-write, where a read-write mapping
// would succeed).
func TestLoadedMappingsReadOnly(t *testing.T) {
	path := tempPath(t)
	first, later := keys(3, 1), keys(6, 1)[3:]
	process(t, cache.Options{Path: path}, first)

	c := open(t, cache.Options{Path: path})
	require.NoError(t, c.InitializeForProgram("P"))
	for _, p := range protsOf(t, c, first) {
		assert.Equal(t, "r--s", p, "an entry mapped by the load")
	}

	// Another process commits more; this cache's next reservation starts a
	// write, which merges that commit through the read-write descriptor.
	process(t, cache.Options{Path: path}, append(append([]spec.Key{}, first...), later...))
	buf, err := c.ReserveSpace(sizeOf(key("mine", 1)))
	require.NoError(t, err)
	fillPacked(key("mine", 1), buf)
	_, err = c.LookUpOrInsert(key("mine", 1), buf)
	require.NoError(t, err)
	for _, p := range protsOf(t, c, later) {
		assert.Equal(t, "r--s", p, "an entry mapped by a writer's merge")
	}
	require.NoError(t, c.Finalize())
}

// Finalize turns what it committed read-only (G1): the kernel's record says so,
// and a store into a finalized entry's bytes faults in a child process (the
// test binary re-executed), leaving the committed entry as it was packed.
func TestStoreIntoFinalizedBytesFaults(t *testing.T) {
	if os.Getenv("XPWC_STORE_CHILD") != "" {
		storeChild()
		return
	}
	for _, staged := range []bool{false, true} {
		path := tempPath(t)
		ks := keys(2, 1)

		c := open(t, cache.Options{Path: path, MappedWrites: !staged})
		launch(t, c, "P", ks)
		for _, p := range protsOf(t, c, ks) {
			assert.Equal(t, "r--s", p, "staged %v: finalized bytes must be read-only", staged)
		}

		cmd := exec.Command(os.Args[0], "-test.run=^TestStoreIntoFinalizedBytesFaults$", "-test.count=1")
		cmd.Env = append(os.Environ(), "XPWC_STORE_CHILD="+path, "XPWC_STORE_STAGED="+strconv.FormatBool(staged))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		require.Contains(t, stdout.String(), "storing", "the child did not get to the store: %s", stderr.String())
		assert.NotContains(t, stdout.String(), "stored", "staged %v: a store into finalized bytes succeeded", staged)
		require.Error(t, err, "the child survived the store")
		assert.Contains(t, stderr.String(), "unexpected fault address", "the child died of something else")
		// The child's entry was committed before its store: it is there,
		// with the bytes that were packed (pack checks them, and its
		// checksum would turn a changed byte into a corrupt miss).
		s := process(t, cache.Options{Path: path}, []spec.Key{key("child", 1)})
		assert.Equal(t, uint64(1), s.Hits)
		assert.Zero(t, s.Corrupt)
	}
}

// A staged insert is served from a read-only shared mapping of the file
// from the insert on, before any Finalize: the packer's writable memory was
// the staging buffer, which the entry does not use.
func TestStagedInsertMappedReadOnly(t *testing.T) {
	c := open(t, cache.Options{Path: tempPath(t)})
	ks := keys(2, 1)
	require.NoError(t, c.InitializeForProgram("P"))
	for _, k := range ks {
		pack(t, c, k)
	}
	for _, p := range protsOf(t, c, ks) {
		assert.Equal(t, "r--s", p, "inserted staged bytes must be read-only")
	}
	require.NoError(t, c.Finalize())
}

// storeChild packs one new weight into the file at XPWC_STORE_CHILD,
// finalizes, and stores into the finalized bytes. It exits 0 only if the
// store did not fault.
func storeChild() {
	path := os.Getenv("XPWC_STORE_CHILD")
	staged, _ := strconv.ParseBool(os.Getenv("XPWC_STORE_STAGED"))
	c, err := cache.Open(cache.Options{Path: path, MappedWrites: !staged})
	if err != nil {
		os.Exit(4)
	}
	k := key("child", 1)
	if c.InitializeForProgram("C") != nil {
		os.Exit(4)
	}
	buf, err := c.ReserveSpace(sizeOf(k))
	if err != nil {
		os.Exit(4)
	}
	fillPacked(k, buf)
	h, err := c.LookUpOrInsert(k, buf)
	if err != nil || c.Finalize() != nil {
		os.Exit(4)
	}
	if s := c.Stats(); s.FileBytes == 0 || s.Commits == 0 {
		fmt.Println("not file-backed")
		os.Exit(4)
	}
	b, err := c.Bytes(h)
	if err != nil {
		os.Exit(4)
	}
	fmt.Println("storing")
	b[0] ^= 0xFF
	fmt.Println("stored")
	os.Exit(0)
}
