package crashpoint

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// The checks must be able to fail. These tests break durability or the
// packed bytes on purpose and require the enumeration to notice.

// lyingFS acknowledges every sync without doing it, like a disk with a
// volatile write cache and no barriers.
type lyingFS struct{ vfs.FS }

func (l lyingFS) SyncDir(string) error { return nil }
func (l lyingFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := l.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return lyingFile{f}, nil
}

type lyingFile struct{ vfs.File }

func (l lyingFile) Sync() error     { return nil }
func (l lyingFile) SyncData() error { return nil }
func (l lyingFile) Map(off int64, n int, p vfs.Prot) (vfs.Mapping, error) {
	m, err := l.File.Map(off, n, p)
	if err != nil {
		return nil, err
	}
	return lyingMapping{m}, nil
}

type lyingMapping struct{ vfs.Mapping }

func (l lyingMapping) Sync() error { return nil }

func TestHarnessCatchesLostDurability(t *testing.T) {
	cold := Workloads(4)[0]
	rep, err := Enumerate(Config{Format: spec.FormatV3, Outcomes: 8, Seed: 1,
		Wrap: func(f vfs.FS) vfs.FS { return lyingFS{f} }}, cold)
	require.NoError(t, err)
	t.Log(rep)
	assert.Positive(t, rep.ByGuarantee()["G2"], "a save acknowledged without fsync must lose entries at a power loss")
}

func TestHarnessCatchesWrongBytes(t *testing.T) {
	ks := Keys(3, 1)
	w := Workload{
		Name: "stale packer",
		Run: func(e Env) error {
			// A launch that stores the packing of another seed under the
			// current key: what a cache that ignored the seed would serve.
			e.Opts.FS = e.FS
			c, err := cache.Open(e.Opts)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.InitializeForProgram("p"); err != nil {
				return err
			}
			for _, k := range ks {
				old := k
				old.Seed++
				want := Pack(old)
				buf, err := c.ReserveSpace(len(want))
				if err != nil {
					return err
				}
				copy(buf, want)
				if _, err := c.LookUpOrInsert(k, buf[:len(want)]); err != nil {
					return err
				}
			}
			return c.Finalize()
		},
		Keys: ks,
	}
	rep, err := Enumerate(Config{Format: spec.FormatV3, Outcomes: 2, Seed: 1}, w)
	require.NoError(t, err)
	assert.Positive(t, rep.ByGuarantee()["G1"], "wrong bytes under a key must be reported")
}
