package cache_test

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// open returns a cache whose consistency is checked and which is closed at
// the end of the test.
func open(t testing.TB, opts cache.Options) *cache.Cache {
	t.Helper()
	c, err := cache.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, c.Check())
		require.NoError(t, c.Close())
	})
	return c
}

// key is a test weight identity: name, bias name+"_b", a layout seed and a
// kernel fingerprint/source of 1 unless changed by the caller.
func key(name string, seed uint32) spec.Key {
	return spec.Key{Weight: name, Bias: name + "_b", Seed: seed, Fingerprint: 1, Source: 1}
}

// keys returns n keys w0..w(n-1) with seed.
func keys(n int, seed uint32) []spec.Key {
	out := make([]spec.Key, n)
	for i := range out {
		out[i] = key("w"+itoa(i), seed)
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// sizeOf gives each key a size between 100 and ~5000 bytes, so some entries
// span a page boundary.
func sizeOf(k spec.Key) int {
	h := fnv.New32a()
	h.Write([]byte(k.Name()))
	return 100 + int(h.Sum32()%5000)
}

// packed is what the deterministic test packer produces for k: bytes derived
// from every field of the key, so a stale packing differs.
func packed(k spec.Key) []byte {
	b := make([]byte, sizeOf(k))
	fillPacked(k, b)
	return b
}

func fillPacked(k spec.Key, b []byte) {
	h := fnv.New64a()
	h.Write([]byte(k.Name()))
	var x [20]byte
	binary.LittleEndian.PutUint32(x[0:], k.Seed)
	binary.LittleEndian.PutUint64(x[4:], k.Fingerprint)
	binary.LittleEndian.PutUint64(x[12:], k.Source)
	h.Write(x[:])
	s := h.Sum64() | 1
	for i := range b {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		b[i] = byte(s)
	}
}

// pack does what XNNPACK's operator creation does for one weight: look up;
// on a miss reserve, pack and look up or insert. It returns the handle and
// whether the look-up hit, and checks the bytes are the right packing (G1).
func pack(t testing.TB, c *cache.Cache, k spec.Key) (cache.Handle, bool) {
	t.Helper()
	h, hit := c.LookUp(k)
	if !hit {
		buf, err := c.ReserveSpace(sizeOf(k))
		require.NoError(t, err)
		fillPacked(k, buf)
		h, err = c.LookUpOrInsert(k, buf)
		require.NoError(t, err)
	}
	got, err := c.Bytes(h)
	require.NoError(t, err)
	require.True(t, bytes.Equal(packed(k), got), "wrong bytes for %q", k.Name())
	return h, hit
}

// launch runs one program over ks on c: initialize, pack each, finalize. It
// returns the number of hits.
func launch(t testing.TB, c *cache.Cache, program string, ks []spec.Key) int {
	t.Helper()
	require.NoError(t, c.InitializeForProgram(program))
	hits := 0
	for _, k := range ks {
		if _, hit := pack(t, c, k); hit {
			hits++
		}
	}
	require.NoError(t, c.Finalize())
	return hits
}

// process runs a whole launch in a fresh cache, as a new process would, and
// returns its stats after Finalize.
func process(t testing.TB, opts cache.Options, ks []spec.Key) cache.Stats {
	t.Helper()
	c, err := cache.Open(opts)
	require.NoError(t, err)
	launch(t, c, "P", ks)
	s := c.Stats()
	require.NoError(t, c.Check())
	require.NoError(t, c.Close())
	return s
}

func tempPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "weights.xpwc")
}

func fileInfo(t testing.TB, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi
}

// hookFS wraps a vfs.FS and lets a test fail chosen calls.
type hookFS struct {
	vfs.FS
	open     func(name string, flag int) error
	allocate func(name string, off, length int64) error
	mmap     func(name string) error
	fill     func(name string, off, length int64) error
}

func (h *hookFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	if h.open != nil {
		if err := h.open(name, flag); err != nil {
			return nil, err
		}
	}
	f, err := h.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, h: h}, nil
}

type hookFile struct {
	vfs.File
	h *hookFS
}

func (f *hookFile) Allocate(off, length int64) error {
	if f.h.allocate != nil {
		if err := f.h.allocate(f.Name(), off, length); err != nil {
			return err
		}
	}
	return f.File.Allocate(off, length)
}

func (f *hookFile) Map(off int64, length int, prot vfs.Prot) (vfs.Mapping, error) {
	if f.h.mmap != nil {
		if err := f.h.mmap(f.Name()); err != nil {
			return nil, err
		}
	}
	return f.File.Map(off, length, prot)
}

// FillHuge makes every hooked file a vfs.HugeFiller: the hook sees the
// call first, then the wrapped file fills if it can.
func (f *hookFile) FillHuge(off, length int64) error {
	if f.h.fill != nil {
		if err := f.h.fill(f.Name(), off, length); err != nil {
			return err
		}
	}
	if hf, ok := f.File.(vfs.HugeFiller); ok {
		return hf.FillHuge(off, length)
	}
	return vfs.ErrNotSupported
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
