package explore

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
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
			// A visited state is an 8-byte fingerprint (and a 4-byte
			// number in memory with liveness) in a table at most 4/5 full,
			// grown by a quarter (fingerprint mode, from a page a segment)
			// or by half (in memory, from 4,096 slots); with N workers
			// the fingerprints are N tables, each from its own pages.
			assert.GreaterOrEqual(t, fp.VisitedBytes, uint64(fp.States)*8, name)
			assert.LessOrEqual(t, fp.VisitedBytes, uint64(fp.States)*25/2+uint64(v.workers)*fpSegments*pageWords*8, name)
			assert.GreaterOrEqual(t, mem.VisitedBytes, uint64(mem.States)*12, name)
			assert.LessOrEqual(t, mem.VisitedBytes, uint64(max(mem.States*2, 4096))*12, name)
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
	assert.Equal(t, 6, temp.made, "two levels, the links, the graph, its rows' sources and its named steps")
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
	assert.GreaterOrEqual(t, tb.bytes(), uint64(len(added))*8, "8 bytes a fingerprint")
	// The replaced segments go back each time the table has grown by an
	// eighth: at least once for every eighth it grew by from a page a
	// segment.
	eighths := math.Log(float64(tb.bytes())/(fpSegments*pageWords*8)) / math.Log(9.0/8)
	assert.GreaterOrEqual(t, float64(released), eighths-1)
	// Freed, it holds nothing and gives its memory back.
	before := released
	tb.free()
	assert.Zero(t, tb.bytes())
	assert.Equal(t, before+1, released)
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

// An I/O error in any of the fingerprint mode's files, at any point of the
// run (the first call of a kind, the second, one midway, the last), ends
// the run with that error, wrapped, and every file closed: never a result
// read from a broken file. A failed close of a temporary file loses
// nothing, so it does not fail the run.
func TestFingerprintModeIOErrors(t *testing.T) {
	d, err := model.DesignByName("executorch")
	require.NoError(t, err)
	b := livenessBounds
	b.Kernels = 1
	opts := Options{Bounds: b, Liveness: true, Fingerprints: true}
	want, err := Run(d, Options{Bounds: b, Liveness: true})
	require.NoError(t, err)
	require.NotEmpty(t, want.Liveness.Violations, "a lasso to read back")

	clean := &faultyTemp{testTemp: newTestTemp(t)}
	opts.TempFiles = clean
	r, err := Run(d, opts)
	require.NoError(t, err)
	require.Equal(t, want.Liveness, r.Liveness)
	t.Logf("calls: %v", clean.calls)
	for _, method := range []string{"Create", "Write", "Read", "ReadAt", "Seek", "Truncate", "Close"} {
		total := clean.calls[method]
		require.Positive(t, total, "%s: the run makes no such call", method)
		for _, at := range []int{1, 2, total / 2, total} {
			if at < 1 || at > total {
				continue
			}
			temp := &faultyTemp{testTemp: newTestTemp(t), method: method, at: at}
			opts.TempFiles = temp
			r, err := Run(d, opts)
			assert.Zero(t, temp.open, "%s #%d: files left open", method, at)
			if method == "Close" {
				require.NoError(t, err, "%s #%d", method, at)
				assert.Equal(t, want.Liveness, r.Liveness, "%s #%d", method, at)
				continue
			}
			require.ErrorIs(t, err, errInjected, "%s #%d of %d", method, at, total)
		}
	}
}

var errInjected = errors.New("injected I/O error")

// faultyTemp makes files whose at-th call of method (counted over all
// of them, and Create) fails with errInjected; it counts every call.
type faultyTemp struct {
	*testTemp
	method string
	at     int
	calls  map[string]int
}

func (o *faultyTemp) fault(method string) error {
	if o.calls == nil {
		o.calls = map[string]int{}
	}
	o.calls[method]++
	if method == o.method && o.calls[method] == o.at {
		return errInjected
	}
	return nil
}

func (o *faultyTemp) Create() (TempFile, error) {
	if err := o.fault("Create"); err != nil {
		return nil, err
	}
	f, err := o.testTemp.Create()
	if err != nil {
		return nil, err
	}
	return &faultyFile{f.(*testFile), o}, nil
}

type faultyFile struct {
	*testFile
	o *faultyTemp
}

func (f *faultyFile) Write(p []byte) (int, error) {
	if err := f.o.fault("Write"); err != nil {
		return 0, err
	}
	return f.testFile.Write(p)
}

func (f *faultyFile) Read(p []byte) (int, error) {
	if err := f.o.fault("Read"); err != nil {
		return 0, err
	}
	return f.testFile.Read(p)
}

func (f *faultyFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.o.fault("ReadAt"); err != nil {
		return 0, err
	}
	return f.testFile.ReadAt(p, off)
}

func (f *faultyFile) Seek(off int64, whence int) (int64, error) {
	if err := f.o.fault("Seek"); err != nil {
		return 0, err
	}
	return f.testFile.Seek(off, whence)
}

func (f *faultyFile) Truncate(size int64) error {
	if err := f.o.fault("Truncate"); err != nil {
		return err
	}
	return f.testFile.Truncate(size)
}

func (f *faultyFile) Close() error {
	err := f.o.fault("Close")
	if cerr := f.testFile.Close(); err == nil {
		err = cerr
	}
	return err
}
