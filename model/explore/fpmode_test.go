package explore

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
)

// The fingerprint mode keeps the search on disk and the fingerprints alone
// in memory: on every design it visits the same states and finds the same
// traces, covers and liveness verdict (lassos included) as the search in
// memory; on a design that converges and one that does not, also with two
// workers and without merging mirror images.
func TestFingerprintModeSameResult(t *testing.T) {
	b := livenessBounds
	b.Kernels = 1
	type variant struct {
		noSym   bool
		workers int
	}
	every := map[string]bool{"reference": true, "repack-to-heap": true}
	if testing.Short() {
		// notShort: the two smallest designs with lassos, every way.
		every = map[string]bool{"executorch": true, "pr19862-no-index": true}
	}
	for _, d := range model.Designs() {
		if testing.Short() && !every[d.Name] && d.Name != "reference" {
			continue
		}
		variants := []variant{{false, 1}}
		if every[d.Name] {
			variants = append(variants, variant{false, 2}, variant{true, 1})
		}
		mems := map[bool]Result{} // by noSym: the workers do not change it
		for _, v := range variants {
			mem, ok := mems[v.noSym]
			if !ok {
				var err error
				mem, err = Run(d, Options{Bounds: b, Liveness: true, NoSymmetry: v.noSym})
				require.NoError(t, err)
				require.True(t, mem.Exhausted && mem.Liveness.Checked, d.Name)
				mems[v.noSym] = mem
			}
			fp, err := Run(d, Options{Bounds: b, Liveness: true, NoSymmetry: v.noSym, Fingerprints: true, Workers: v.workers, TempFiles: newTestTemp(t)})
			require.NoError(t, err)
			name := fmt.Sprintf("%s %+v", d.Name, v)
			assert.Equal(t, mem.States, fp.States, name)
			assert.Equal(t, mem.Transitions, fp.Transitions, name)
			assert.Equal(t, mem.Depth, fp.Depth, name)
			assert.Equal(t, mem.Exhausted, fp.Exhausted, name)
			assert.Equal(t, mem.Violations, fp.Violations, name)
			assert.Equal(t, mem.Covered, fp.Covered, name)
			assert.Equal(t, mem.Liveness, fp.Liveness, name)
		}
	}
}

// With a depth bound and a variant's bugs, the fingerprint mode keeps the
// same shortest traces (read back from the parent links on disk) and
// stops where the search in memory stops.
func TestFingerprintModeSameTraces(t *testing.T) {
	b := model.DefaultBounds()
	b.Depth = 9
	for _, d := range model.Designs() {
		mem, err := Run(d, Options{Bounds: b, StopWhenFound: d.Expect})
		require.NoError(t, err)
		fp, err := Run(d, Options{Bounds: b, StopWhenFound: d.Expect, Fingerprints: true, TempFiles: newTestTemp(t)})
		require.NoError(t, err)
		assert.Equal(t, mem.States, fp.States, d.Name)
		assert.Equal(t, mem.Stopped, fp.Stopped, d.Name)
		assert.Equal(t, mem.Violations, fp.Violations, d.Name)
	}
}

// Files it cannot create are an error, not a silent search in memory; so
// is the mode asked for without a way to make them.
func TestFingerprintModeNeedsItsFiles(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	_, err = Run(d, Options{Bounds: livenessBounds, Fingerprints: true, TempFiles: &testTemp{dir: filepath.Join(t.TempDir(), "missing")}})
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = Run(d, Options{Bounds: livenessBounds, Fingerprints: true})
	require.ErrorIs(t, err, ErrNoTempFiles)
}

// The run closes every file it made.
func TestFingerprintModeClosesItsFiles(t *testing.T) {
	name := "repack-to-heap"
	if testing.Short() {
		name = "pr19862-no-index" // notShort: a smaller space with a lasso
	}
	d, err := model.DesignByName(name)
	require.NoError(t, err)
	temp := newTestTemp(t)
	_, err = Run(d, Options{Bounds: livenessBounds, Liveness: true, Fingerprints: true, TempFiles: temp})
	require.NoError(t, err)
	assert.Equal(t, 5, temp.made, "two levels, the links, the graph and its named steps")
	assert.Zero(t, temp.open)
}

// testTemp makes temporary files in a test's directory and counts them.
type testTemp struct {
	dir        string
	made, open int
}

func newTestTemp(t *testing.T) *testTemp { return &testTemp{dir: t.TempDir()} }

func (o *testTemp) Create() (TempFile, error) {
	f, err := os.CreateTemp(o.dir, "explore-*")
	if err != nil {
		return nil, err
	}
	o.made++
	o.open++
	return &testFile{f, o}, nil
}

type testFile struct {
	*os.File
	o *testTemp
}

func (f *testFile) Close() error {
	f.o.open--
	return f.File.Close()
}

// fpTable: every fingerprint added is found again, through every growth
// of every segment; each segment stays at most 4/5 full, and the table
// holds no more than 12.5 bytes a fingerprint plus a page a segment.
func TestFPTable(t *testing.T) {
	released := 0
	tb := newFPTable(func() { released++ })
	defer tb.free()
	x := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	var added []uint64
	for range 300000 {
		fp := next()
		_, isNew := tb.addID(fp, 0)
		require.True(t, isNew)
		added = append(added, fp)
	}
	for _, fp := range added {
		_, isNew := tb.addID(fp, 0)
		require.False(t, isNew)
	}
	assert.Equal(t, len(added), tb.n)
	assert.Positive(t, released, "growth hands the replaced segments back")
	for i := range tb.segs {
		s := &tb.segs[i]
		assert.LessOrEqual(t, s.n, len(s.slots)/5*4, "segment %d", i)
	}
	assert.LessOrEqual(t, tb.bytes(), uint64(len(added))*25/2+fpSegments*pageWords*8)
	// 0 marks a free slot: it is kept as 1.
	_, isNew := tb.addID(0, 0)
	assert.True(t, isNew)
	_, isNew = tb.addID(1, 0)
	assert.False(t, isNew)
}

// Both kinds of level, in memory and in a file, give back through the
// interface the search uses the encodings pushed, in order, after a reset
// too.
func TestLevelQueuesKeepOrder(t *testing.T) {
	sp := &spill{temp: newTestTemp(t)}
	for _, q := range []levelQueue{&frontier{}, newDiskFrontier(sp)} {
		for round := range 2 {
			q.reset()
			var want []model.Encoding
			for i := range 3000 {
				var e model.Encoding
				for j := range e {
					if (i*7+j+round)%5 == 0 {
						e[j] = byte(i + j)
					}
				}
				q.push(&e)
				want = append(want, e)
			}
			require.Equal(t, len(want), q.count())
			q.rewind()
			for i := range want {
				var e model.Encoding
				q.next(&e)
				require.Equal(t, want[i], e, "%T state %d", q, i)
			}
		}
	}
	require.NoError(t, sp.close())
}
