package crashfs

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/vfs"
)

// A naive reference of the crash model, without mappings or loss units: a
// file is a pair of byte slices, a directory a pair of name maps. crashfs
// must agree with it on the page cache, on a process crash, and on the two
// extreme power losses (keep nothing: the durable state; keep everything:
// the page cache).
type refFile struct{ vol, dur []byte }

type refFS struct {
	files    map[int]*refFile
	vol, dur map[string]int // name -> file id, in one directory
	next     int
}

func (r *refFS) state(durable bool) map[string][]byte {
	out := map[string][]byte{}
	names := r.vol
	if durable {
		names = r.dur
	}
	for n, id := range names {
		b := r.files[id].vol
		if durable {
			b = r.files[id].dur
		}
		out["/d/"+n] = append([]byte{}, b...)
	}
	return out
}

func TestAgainstReference(t *testing.T) {
	names := []string{"a", "b", "c"}
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		f := New(Options{})
		require.NoError(t, f.MkdirAll("/d"))
		ref := &refFS{files: map[int]*refFile{}, vol: map[string]int{}, dur: map[string]int{}}
		open := map[string]vfs.File{} // a handle per name, on the current inode
		var trace []string
		handle := func(n string) vfs.File {
			if h, ok := open[n]; ok {
				return h
			}
			h, err := f.OpenFile("/d/"+n, os.O_RDWR, 0)
			require.NoError(t, err)
			open[n] = h
			return h
		}
		for i := 0; i < 30; i++ {
			n := names[rng.IntN(len(names))]
			id, exists := ref.vol[n]
			switch op := rng.IntN(7); {
			case op == 0 || !exists:
				if exists {
					continue
				}
				_, err := f.OpenFile("/d/"+n, os.O_RDWR|os.O_CREATE, 0o644)
				require.NoError(t, err)
				ref.next++
				ref.files[ref.next] = &refFile{}
				ref.vol[n] = ref.next
				trace = append(trace, "create "+n)
			case op == 1:
				off := rng.IntN(2000)
				data := []byte(fmt.Sprintf("%d-%d", seed, i))
				_, err := handle(n).WriteAt(data, int64(off))
				require.NoError(t, err)
				rf := ref.files[id]
				if len(rf.vol) < off+len(data) {
					rf.vol = append(rf.vol, make([]byte, off+len(data)-len(rf.vol))...)
				}
				copy(rf.vol[off:], data)
				trace = append(trace, fmt.Sprintf("write %s %d", n, off))
			case op == 2:
				size := rng.IntN(2500)
				require.NoError(t, handle(n).Truncate(int64(size)))
				rf := ref.files[id]
				if size < len(rf.vol) {
					rf.vol = rf.vol[:size]
				} else {
					rf.vol = append(rf.vol, make([]byte, size-len(rf.vol))...)
				}
				trace = append(trace, fmt.Sprintf("truncate %s %d", n, size))
			case op == 3:
				require.NoError(t, handle(n).Sync())
				rf := ref.files[id]
				rf.dur = append([]byte{}, rf.vol...)
				trace = append(trace, "sync "+n)
			case op == 4:
				require.NoError(t, f.SyncDir("/d"))
				ref.dur = map[string]int{}
				for k, v := range ref.vol {
					ref.dur[k] = v
				}
				trace = append(trace, "syncdir")
			case op == 5:
				to := names[rng.IntN(len(names))]
				require.NoError(t, f.Rename("/d/"+n, "/d/"+to))
				delete(ref.vol, n)
				ref.vol[to] = id
				if to != n {
					// The handle follows the inode; re-key it by name.
					if h, ok := open[n]; ok {
						open[to] = h
						delete(open, n)
					} else {
						delete(open, to)
					}
				}
				trace = append(trace, "rename "+n+" "+to)
			case op == 6:
				require.NoError(t, f.Remove("/d/"+n))
				delete(ref.vol, n)
				delete(open, n)
				trace = append(trace, "remove "+n)
			}
		}
		msg := fmt.Sprintf("seed %d: %v", seed, trace)
		require.Equal(t, ref.state(false), f.Files(), "page cache, %s", msg)
		require.Equal(t, ref.state(false), f.ProcessCrash().Files(), "process crash, %s", msg)
		require.Equal(t, ref.state(true), f.PowerLossWith(LossConfig{Keep: 0}).Files(), "power loss keeping nothing, %s", msg)
		require.Equal(t, ref.state(false), f.PowerLossWith(LossConfig{Keep: 1}).Files(), "power loss keeping everything, %s", msg)
	}
}
