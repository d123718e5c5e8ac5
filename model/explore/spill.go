package explore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// TempFiles makes the fingerprint mode's temporary files (Options): the
// package does no I/O of its own, so the caller says where they go (simrun
// puts them in the system's temporary directory).
type TempFiles interface {
	// Create returns a new empty file, read and written through the
	// handle alone, gone once closed.
	Create() (TempFile, error)
}

// TempFile is one temporary file (*os.File has these methods).
type TempFile interface {
	io.ReadWriteSeeker
	io.ReaderAt
	Truncate(size int64) error
	Close() error
}

// spill holds the temporary files of the fingerprint mode: what TLC keeps
// on disk, here the two levels of the breadth-first search, the parent
// links and the liveness graph's steps. Every file is written once in
// order and read back in order, but for the parent links, which a trace
// reads one record at a time. The first I/O error is kept and ends the
// run.
type spill struct {
	temp  TempFiles
	files []TempFile
	err   error
}

// spillBuffer is each file's buffer: large enough for sequential I/O,
// small beside the fingerprints.
const spillBuffer = 64 << 10

func (s *spill) create() TempFile {
	if s.err != nil {
		return nil
	}
	if s.temp == nil {
		s.fail(ErrNoTempFiles)
		return nil
	}
	f, err := s.temp.Create()
	if err != nil {
		s.fail(fmt.Errorf("explore: temporary file: %w", err))
		return nil
	}
	s.files = append(s.files, f)
	return f
}

// ErrNoTempFiles is the fingerprint mode asked for without Options.TempFiles.
var ErrNoTempFiles = errors.New("explore: the fingerprint mode needs temporary files (Options.TempFiles)")

func (s *spill) fail(err error) {
	if s.err == nil && err != nil {
		s.err = err
	}
}

// close closes every file; the first error of the run, or of closing.
func (s *spill) close() error {
	for _, f := range s.files {
		s.fail(f.Close())
	}
	s.files = nil
	return s.err
}

// levelQueue is one level of the search: the states pushed, read back in
// the order they were pushed.
type levelQueue interface {
	push(*model.Encoding)
	count() int
	reset()
	rewind()
	next(*model.Encoding)
}

func (f *frontier) count() int                 { return f.n }
func (f *frontier) rewind()                    { f.rd = cursor{} }
func (f *frontier) next(e *model.Encoding)     { f.pop(&f.rd, e) }
func (f *diskFrontier) count() int             { return f.n }
func (f *diskFrontier) next(e *model.Encoding) { f.read(e) }

// diskFrontier is a level in a file, each state packed as frontier packs
// it (the bitmap of its nonzero bytes, then those bytes).
type diskFrontier struct {
	spillFile
	r   *bufio.Reader
	buf []byte
	n   int
	// Scratch for read: fields, not locals, which would escape through
	// io.ReadFull once a state.
	present [bitmapSize]byte
	vals    [model.EncodedSize]byte
}

func newDiskFrontier(s *spill) *diskFrontier {
	return &diskFrontier{spillFile: s.file(), r: bufio.NewReaderSize(nil, spillBuffer)}
}

func (f *diskFrontier) push(e *model.Encoding) {
	f.n++
	if f.s.err != nil {
		return
	}
	f.buf = appendPacked(f.buf[:0], e)
	_, err := f.w.Write(f.buf)
	f.s.fail(err)
}

func (f *diskFrontier) reset() {
	f.n = 0
	if f.s.err != nil {
		return
	}
	f.s.fail(f.f.Truncate(0))
	_, err := f.f.Seek(0, io.SeekStart)
	f.s.fail(err)
	f.w.Reset(f.f)
}

func (f *diskFrontier) rewind() {
	if f.s.err != nil {
		return
	}
	f.s.fail(f.w.Flush())
	_, err := f.f.Seek(0, io.SeekStart)
	f.s.fail(err)
	f.r.Reset(f.f)
}

func (f *diskFrontier) read(e *model.Encoding) {
	*e = model.Encoding{}
	if f.s.err != nil {
		return
	}
	present, vals := f.present[:], f.vals[:]
	if _, err := io.ReadFull(f.r, present); err != nil {
		f.s.fail(fmt.Errorf("explore: read level: %w", err))
		return
	}
	n := 0
	for _, m := range present {
		n += bits.OnesCount8(m)
	}
	if _, err := io.ReadFull(f.r, vals[:n]); err != nil {
		f.s.fail(fmt.Errorf("explore: read level: %w", err))
		return
	}
	unpack(present, vals[:n], e)
}

// diskLinks keeps the parent links in a file: 6 bytes a state, written in
// order, read one record per step of a trace.
type diskLinks struct {
	spillFile
	dirty bool
	rec   [linkRecord]byte
}

const linkRecord = 6

func newDiskLinks(s *spill) *diskLinks { return &diskLinks{spillFile: s.file()} }

func (l *diskLinks) put(parent int32, via uint16) {
	if l.s.err != nil {
		return
	}
	rec := l.rec[:]
	binary.LittleEndian.PutUint32(rec, uint32(parent))
	binary.LittleEndian.PutUint16(rec[4:], via)
	_, err := l.w.Write(rec)
	l.s.fail(err)
	l.dirty = true
}

func (l *diskLinks) get(i int32) (int32, uint16) {
	if l.s.err != nil {
		return -1, 0
	}
	if l.dirty {
		l.s.fail(l.w.Flush())
		l.dirty = false
	}
	var rec [linkRecord]byte
	if _, err := l.f.ReadAt(rec[:], int64(i)*linkRecord); err != nil {
		l.s.fail(fmt.Errorf("explore: read parent link %d: %w", i, err))
		return -1, 0
	}
	return int32(binary.LittleEndian.Uint32(rec[:])), binary.LittleEndian.Uint16(rec[4:])
}

// diskGraph writes the liveness graph's steps to a file as the search
// finds them: for each state with a step that stays in the graph the check
// searches (quiet, not a converged launch, not back to itself), its
// fingerprint and number, then each such step's target fingerprint and
// flags. Targets are named by fingerprint because the fingerprint mode
// keeps no state numbers in memory; load numbers them afterwards. The
// rows' sources also go, alone, to a second file (heads), and are counted
// by their top byte (tops), so that indexing them (nameSteps) reads 8
// bytes a row once instead of the whole graph twice.
type diskGraph struct {
	spillFile
	heads spillFile
	tops  [256]uint32
	src   uint64
	num   int32
	row   []byte
	outs  int
	rows  int
	hdr   [8 + 4 + binary.MaxVarintLen64]byte
	// release returns freed memory to the operating system (as
	// fpTable's).
	release func()
	// workers is how many goroutines sort the fingerprints (fpIndex),
	// name the steps and read them back.
	workers int
	// segs are the segments of the named steps' file (readNamed).
	segs []namedSegment
}

func newDiskGraph(s *spill) *diskGraph { return &diskGraph{spillFile: s.file(), heads: s.file()} }

// startNode ends the previous state's row and begins state num's.
func (g *diskGraph) startNode(num int32, fp uint64) {
	g.flushRow()
	g.src, g.num, g.row, g.outs = fp, num, g.row[:0], 0
}

func (g *diskGraph) add(to uint64, flags uint8) {
	g.row = binary.LittleEndian.AppendUint64(g.row, to)
	g.row = append(g.row, flags)
	g.outs++
}

func (g *diskGraph) flushRow() {
	if g.outs == 0 || g.s.err != nil {
		return
	}
	hdr := g.hdr[:]
	binary.LittleEndian.PutUint64(hdr, g.src)
	binary.LittleEndian.PutUint32(hdr[8:], uint32(g.num))
	n := binary.PutUvarint(hdr[12:], uint64(g.outs))
	_, err := g.w.Write(hdr[:12+n])
	g.s.fail(err)
	_, err = g.w.Write(g.row)
	g.s.fail(err)
	g.heads.write(hdr[:8])
	g.tops[g.src>>56]++
	g.rows++
	g.outs = 0
}

// headsDo calls fn for every row's source, with the row's number, in
// order.
func (g *diskGraph) headsDo(fn func(src uint64, row uint32)) {
	r := g.heads.reader()
	buf := make([]byte, spillBuffer)
	row := uint32(0)
	for left := g.rows; left > 0 && g.s.err == nil; {
		b := buf[:min(left, len(buf)/8)*8]
		if _, err := io.ReadFull(r, b); err != nil {
			g.s.fail(fmt.Errorf("explore: read liveness graph: %w", err))
			return
		}
		for k := 0; k < len(b); k += 8 {
			fn(binary.LittleEndian.Uint64(b[k:]), row)
			row++
		}
		left -= len(b) / 8
	}
}

// rowsDo calls fn for every row in order: source, number, and the packed
// steps (9 bytes each: target fingerprint, flags).
func (g *diskGraph) rowsDo(fn func(src uint64, num int32, steps []byte)) {
	g.flushRow()
	if g.s.err != nil {
		return
	}
	g.s.fail(g.w.Flush())
	_, err := g.f.Seek(0, io.SeekStart)
	g.s.fail(err)
	r := bufio.NewReaderSize(g.f, spillBuffer)
	var buf []byte
	hdr := make([]byte, 12)
	for range g.rows {
		if _, err := io.ReadFull(r, hdr); err != nil {
			g.s.fail(fmt.Errorf("explore: read liveness graph: %w", err))
			return
		}
		n, err := binary.ReadUvarint(r)
		if err == nil && n > 1<<20 {
			err = errors.New("row too long")
		}
		if err != nil {
			g.s.fail(fmt.Errorf("explore: read liveness graph: %w", err))
			return
		}
		if uint64(cap(buf)) < n*9 {
			buf = make([]byte, n*9)
		}
		buf = buf[:n*9]
		if _, err := io.ReadFull(r, buf); err != nil {
			g.s.fail(fmt.Errorf("explore: read liveness graph: %w", err))
			return
		}
		fn(binary.LittleEndian.Uint64(hdr), int32(binary.LittleEndian.Uint32(hdr[8:])), buf)
	}
}

// load builds the graph the liveness check searches from the file, over
// the states that have a step in it, numbered in the order of the search
// (so the check visits them in the order it visits them in memory). A step
// to a state with none is left out: no cycle goes through such a state, so
// no component with a cycle changes. It returns the graph and the names of
// its states by fingerprint (for the lasso; renumbered gives their traces).
//
// Naming a step's target takes every state's fingerprint at once: they are
// sorted beside their numbers (fpIndex, 13 bytes a state), the named steps
// go to a file, and the names are released before the graph is read back,
// so the two are never in memory together.
func (g *diskGraph) load(tick *ticker) (*graph, *diskIDs) {
	g.flushRow() // the last row counts
	out := &graph{}
	if g.rows == 0 {
		out.finish()
		return out, &diskIDs{g: g}
	}
	named := g.s.file()
	g.nameSteps(named, tick)
	if g.release != nil {
		g.release() // the names go before the graph comes
	}
	named.flush()
	if g.s.err == nil {
		read, err := readNamed(named.f, g.segs, g.workers)
		if err == nil {
			return read, &diskIDs{g: g}
		}
		g.s.fail(err)
	}
	out.finish()
	return out, &diskIDs{g: g}
}

// nameSteps writes each row's steps to named with their targets named by
// row number, leaving out steps to states without a row. The rows'
// sources, counted as they were written, are placed (fpIndex) from the
// heads file by every worker (placeHeads); then the graph's file is read
// once, in order, to name the steps.
func (g *diskGraph) nameSteps(named spillFile, tick *ticker) {
	idx := newFPIndex(g.rows)
	idx.countTops(&g.tops)
	idx.startPlacing()
	g.heads.flush()
	if g.s.err == nil {
		g.s.fail(idx.placeHeads(g.heads.f, g.rows, g.workers))
	}
	idx.finish(g.workers)
	var batch stepBatch
	defer func() { g.segs = batch.segs }()
	row := uint32(0)
	g.rowsDo(func(_ uint64, _ int32, steps []byte) {
		batch.steps = append(batch.steps, steps...)
		batch.ends = append(batch.ends, len(batch.steps))
		if len(batch.steps) >= stepBatchBytes {
			batch.name(idx, g.workers, &named)
		}
		if row++; row&4095 == 0 && tick.due() {
			tick.printf("liveness: naming steps, %d of %d states", row, g.rows)
		}
	})
	batch.name(idx, g.workers, &named)
}

// stepBatch is a run of the graph's rows whose steps are named together,
// the rows shared in order between goroutines (a find is a few misses in
// memory far larger than any cache, so it is the pass's longest part) and
// written in order.
type stepBatch struct {
	steps  []byte // the rows' steps, 9 bytes each
	ends   []int  // where each row's steps end
	outs   [][]byte
	recs   [][]byte
	counts []int // each goroutine's share's steps
	// segs are the segments written so far, one a goroutine's share of
	// a batch (readNamed).
	segs []namedSegment
}

// stepBatchBytes is a batch's size: a few thousand rows, small beside the
// index.
const stepBatchBytes = 1 << 20

// name writes the batch's rows to named, each as its count of named steps
// and those steps (target row, flags), and empties the batch.
func (s *stepBatch) name(idx *fpIndex, workers int, named *spillFile) {
	n := max(1, min(workers, len(s.ends)))
	for len(s.outs) < n {
		s.outs, s.recs, s.counts = append(s.outs, nil), append(s.recs, nil), append(s.counts, 0)
	}
	part := func(w int) {
		lo, hi := len(s.ends)*w/n, len(s.ends)*(w+1)/n
		start := 0
		if lo > 0 {
			start = s.ends[lo-1]
		}
		out := s.outs[w][:0]
		s.counts[w] = 0
		for r := lo; r < hi; r++ {
			rec := s.recs[w][:0]
			k := 0
			for ; start < s.ends[r]; start += 9 {
				if id, ok := idx.find(binary.LittleEndian.Uint64(s.steps[start:])); ok {
					rec = binary.LittleEndian.AppendUint32(rec, id)
					rec = append(rec, s.steps[start+8])
					k++
				}
			}
			out = binary.AppendUvarint(out, uint64(k))
			out = append(out, rec...)
			s.counts[w] += k
			s.recs[w] = rec
		}
		s.outs[w] = out
	}
	if n == 1 {
		part(0)
	} else {
		var wg sync.WaitGroup
		for w := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				part(w)
			}()
		}
		wg.Wait()
	}
	for w, out := range s.outs[:n] {
		named.write(out)
		if rows := len(s.ends)*(w+1)/n - len(s.ends)*w/n; rows > 0 {
			s.segs = append(s.segs, namedSegment{rows: rows, steps: s.counts[w], size: len(out)})
		}
	}
	s.steps, s.ends = s.steps[:0], s.ends[:0]
}

// fpIndex names the liveness graph's states by fingerprint: the
// fingerprints sorted, each beside its row number (12 bytes a state), and
// a directory of where each value of their top k bits begins (2^k about a
// quarter of the states). Fingerprints are uniform, so they are sorted by
// counting, in two steps that each touch memory in order or in a range
// that fits in a cache: place deals them into 256 runs by their top byte,
// then finish sorts each run by the rest of the k bits (and a bucket's few
// by insertion), the runs shared between goroutines. A random write a
// state (a counting sort over all k bits at once) or a comparison sort of
// pairs through sort.Interface took most of the pass at tens of millions
// of states. A find scans a bucket's few neighbours.
type fpIndex struct {
	shift   uint // 64 - k
	topBits uint // of the runs: min(8, k)
	top     []uint32
	dir     []uint32 // by top k bits: the index of the bucket's first fingerprint; the count at the end
	fps     []uint64
	ids     []uint32
}

// newFPIndex is an index for n fingerprints: 2^k buckets, n/8 < 2^k <= n/4.
func newFPIndex(n int) *fpIndex {
	k := uint(max(bits.Len(uint(n))-2, 1))
	tb := min(8, k)
	return &fpIndex{shift: 64 - k, topBits: tb, top: make([]uint32, 1<<tb+1), dir: make([]uint32, 1<<k+1),
		fps: make([]uint64, n), ids: make([]uint32, n)}
}

// count counts fp in its run (before startPlacing).
func (x *fpIndex) count(fp uint64) { x.top[fp>>(64-x.topBits)+1]++ }

// countTops counts fingerprints counted by their top byte (tops[b]: how
// many have top byte b) in their runs, as count would one by one.
func (x *fpIndex) countTops(tops *[256]uint32) {
	for b, n := range tops {
		x.top[b>>(8-x.topBits)+1] += n
	}
}

// startPlacing turns the counts into each run's start.
func (x *fpIndex) startPlacing() {
	for t := 1; t < len(x.top); t++ {
		x.top[t] += x.top[t-1]
	}
}

// place puts fp, named id, at the next free index of its run: top[t]
// moves on to the run's end, which finish moves back.
func (x *fpIndex) place(fp uint64, id uint32) {
	t := fp >> (64 - x.topBits)
	i := x.top[t]
	x.fps[i], x.ids[i] = fp, id
	x.top[t]++
}

// finish sorts each run, on up to workers goroutines, and fills the
// directory.
func (x *fpIndex) finish(workers int) {
	copy(x.top[1:], x.top[:len(x.top)-1])
	x.top[0] = 0
	runs := len(x.top) - 1
	var wg sync.WaitGroup
	for w := range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s runSorter
			for t := w; t < runs; t += max(workers, 1) {
				s.sort(x, t)
			}
		}()
	}
	wg.Wait()
	x.dir[len(x.dir)-1] = uint32(len(x.fps))
}

// runSorter is one goroutine's scratch for sorting runs.
type runSorter struct {
	cnt []uint32
	fps []uint64
	ids []uint32
}

// sort sorts run t by counting on the low k-topBits of the top k bits and
// fills its part of the directory.
func (s *runSorter) sort(x *fpIndex, t int) {
	lo, hi := int(x.top[t]), int(x.top[t+1])
	per := 1 << (64 - x.shift - x.topBits) // buckets a run
	mask := uint64(per - 1)
	s.cnt = append(s.cnt[:0], make([]uint32, per+1)...)
	for _, fp := range x.fps[lo:hi] {
		s.cnt[(fp>>x.shift)&mask+1]++
	}
	for j := 1; j <= per; j++ {
		s.cnt[j] += s.cnt[j-1]
	}
	for j := range per {
		x.dir[t*per+j] = uint32(lo) + s.cnt[j]
	}
	s.fps = append(s.fps[:0], x.fps[lo:hi]...)
	s.ids = append(s.ids[:0], x.ids[lo:hi]...)
	for i, fp := range s.fps {
		j := (fp >> x.shift) & mask
		p := lo + int(s.cnt[j])
		x.fps[p], x.ids[p] = fp, s.ids[i]
		s.cnt[j]++
	}
	for j := range per {
		b, e := int(x.dir[t*per+j]), lo+int(s.cnt[j])
		for i := b + 1; i < e; i++ {
			for k := i; k > b && x.fps[k] < x.fps[k-1]; k-- {
				x.fps[k], x.fps[k-1] = x.fps[k-1], x.fps[k]
				x.ids[k], x.ids[k-1] = x.ids[k-1], x.ids[k]
			}
		}
	}
}

// find returns the row number fp was placed with.
func (x *fpIndex) find(fp uint64) (uint32, bool) {
	b := fp >> x.shift
	for i := x.dir[b]; i < x.dir[b+1]; i++ {
		if x.fps[i] >= fp {
			if x.fps[i] == fp {
				return x.ids[i], true
			}
			break
		}
	}
	return 0, false
}

// spillFile is a temporary file written in order, then read in order.
type spillFile struct {
	s *spill
	f TempFile
	w *bufio.Writer
}

// file makes a new file with its write buffer (no file after an error:
// every use checks the spill's error first).
func (s *spill) file() spillFile {
	f := s.create()
	if f == nil {
		return spillFile{s: s}
	}
	return spillFile{s: s, f: f, w: bufio.NewWriterSize(f, spillBuffer)}
}

func (f *spillFile) write(b []byte) {
	if f.s.err != nil {
		return
	}
	_, err := f.w.Write(b)
	f.s.fail(err)
}

// flush writes out what the buffer holds.
func (f *spillFile) flush() {
	if f.s.err == nil {
		f.s.fail(f.w.Flush())
	}
}

// reader reads the file from the start; on an error, an empty reader.
func (f *spillFile) reader() *bufio.Reader {
	if f.s.err != nil {
		return bufio.NewReader(bytes.NewReader(nil))
	}
	f.s.fail(f.w.Flush())
	_, err := f.f.Seek(0, io.SeekStart)
	f.s.fail(err)
	return bufio.NewReaderSize(f.f, spillBuffer)
}

// diskIDs names the states of a loaded graph by fingerprint, for the
// lasso: only the states of the component it goes round, read from the
// file when the component is known (componentIDs).
type diskIDs struct {
	g   *diskGraph
	ids map[uint64]uint32
}

func (d *diskIDs) lookup(fp uint64) (uint32, bool) {
	id, ok := d.ids[fp]
	return id, ok
}

func (d *diskIDs) only(members []int32) stateIDs {
	in := make(map[int32]bool, len(members))
	for _, m := range members {
		in[m] = true
	}
	ids := make(map[uint64]uint32, len(members))
	d.g.headsDo(func(src uint64, row uint32) {
		if in[int32(row)] {
			ids[src] = row
		}
	})
	return &diskIDs{g: d.g, ids: ids}
}

// renumbered names the states of a loaded graph by their number in the
// search, for their shortest traces: read from the graph's file, which
// the lasso alone asks for (4 bytes a state not kept in memory).
type renumbered struct {
	l *links
	g *diskGraph
}

func (r renumbered) path(v int32) []spec.Op {
	row, num := int32(0), int32(-1)
	r.g.rowsDo(func(_ uint64, n int32, _ []byte) {
		if row == v {
			num = n
		}
		row++
	})
	if num < 0 {
		return nil // an I/O error, which the run returns
	}
	return r.l.path(num)
}
