package explore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// The liveness graph of the fingerprint mode is read back from the file of
// named steps (diskGraph.nameSteps) into memory by every worker at once:
// the file is written in segments, one a naming goroutine's share of a
// batch, each a run of whole rows whose count of rows, steps and bytes is
// kept; so each segment's place in the graph (its first row and step) and
// in the file is known before it is read, and the segments are read and
// parsed in any order, into a graph sized for them all up front.

// namedSegment is one segment of the named steps' file: rows rows, each
// its count of steps (a uvarint) then its steps (target row, flags: 5
// bytes each), steps steps in all, in size bytes.
type namedSegment struct {
	rows, steps, size int
}

// readNamed reads the named steps' segments from f into a graph of every
// segment's rows, on up to workers goroutines.
func readNamed(f interface {
	ReadAt(p []byte, off int64) (int, error)
}, segs []namedSegment, workers int) (*graph, error) {
	type place struct{ row, step, at int }
	places := make([]place, len(segs))
	var end place
	for i, s := range segs {
		places[i] = end
		end.row, end.step, end.at = end.row+s.rows, end.step+s.steps, end.at+s.size
	}
	g := &graph{n: end.step}
	g.off.resize(end.row + 1)
	g.to.resize(end.step)
	g.flags.resize(end.step)
	g.off.set(end.row, uint32(end.step))
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		failure error
	)
	workers = max(1, min(workers, len(segs)))
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := w; i < len(segs); i += workers {
				s, p := segs[i], places[i]
				buf = append(buf[:0], make([]byte, s.size)...)
				err := readFull(f, buf, int64(p.at))
				if err != nil {
					err = fmt.Errorf("explore: read liveness graph: %w", err)
				} else {
					err = g.parseSegment(buf, s, p.row, p.step)
				}
				if err != nil {
					mu.Lock()
					if failure == nil {
						failure = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if failure != nil {
		return nil, failure
	}
	return g, nil
}

// readFull reads len(buf) bytes at off.
func readFull(f interface {
	ReadAt(p []byte, off int64) (int, error)
}, buf []byte, off int64) error {
	n, err := f.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil {
		err = errors.New("short read")
	}
	return err
}

// errBadSegment is a segment of the named steps' file that does not hold
// the rows and steps its record says.
var errBadSegment = errors.New("explore: a segment of the liveness graph's file does not hold its rows and steps")

// parseSegment fills the graph's rows from row on and steps from step on
// with segment s, read into buf.
func (g *graph) parseSegment(buf []byte, s namedSegment, row, step int) error {
	at, end := 0, step+s.steps
	for r := row; r < row+s.rows; r++ {
		k, n := binary.Uvarint(buf[at:])
		if n <= 0 || k > uint64(end-step) || uint64(len(buf)-at-n) < 5*k {
			return errBadSegment
		}
		at += n
		g.off.set(r, uint32(step))
		for range k {
			g.to.set(step, binary.LittleEndian.Uint32(buf[at:]))
			g.flags.set(step, buf[at+4])
			at, step = at+5, step+1
		}
	}
	if at != len(buf) || step != end {
		return errBadSegment
	}
	return nil
}

// resize makes c hold n values (zero for the new ones), its blocks full
// but for the last, as add leaves them.
func (c *blocks[T]) resize(n int) {
	c.b = c.b[:0]
	for ; n > 0; n -= blockLen {
		c.b = append(c.b, make([]T, min(n, blockLen), blockLen))
	}
}

// set writes the i-th value; goroutines may set distinct values at once.
func (c *blocks[T]) set(i int, v T) { c.b[i/blockLen][i%blockLen] = v }

// placeHeads places the rows' sources, read from f (the heads file: 8
// bytes a row, in row order), into x after startPlacing, on up to workers
// goroutines: each takes a range of rows, counts its sources by run, and
// places them from its own start in each run, the ranges' starts in row
// order; so each run holds its sources in row order, as place one by one
// leaves them, and top each run's end.
func (x *fpIndex) placeHeads(f interface {
	ReadAt(p []byte, off int64) (int, error)
}, rows, workers int) error {
	workers = max(1, min(workers, rows/headsPerWorker))
	ranges := func(w int) (int, int) { return rows * w / workers, rows * (w + 1) / workers }
	// each runs fn for ranges 0 to n-1 at once.
	each := func(n int, fn func(w int) error) error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for w := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[w] = fn(w)
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	read := func(w int, fn func(fp uint64, row uint32)) error {
		lo, hi := ranges(w)
		buf := make([]byte, spillBuffer)
		for r := lo; r < hi; {
			n := min(hi-r, len(buf)/8)
			if err := readFull(f, buf[:n*8], int64(r)*8); err != nil {
				return fmt.Errorf("explore: read liveness graph: %w", err)
			}
			for k := range n {
				fn(binary.LittleEndian.Uint64(buf[k*8:]), uint32(r+k))
			}
			r += n
		}
		return nil
	}
	// at[w][t]: where range w places its next source of run t.
	at := make([][]uint32, workers)
	for w := range at {
		at[w] = make([]uint32, len(x.top))
	}
	shift := 64 - x.topBits
	// Each range's count places the ranges after it: the last range's
	// (the only one, with one goroutine) is not needed.
	if err := each(workers-1, func(w int) error {
		return read(w, func(fp uint64, _ uint32) { at[w][fp>>shift]++ })
	}); err != nil {
		return err
	}
	for t := range len(x.top) - 1 {
		next := x.top[t]
		for w := range at {
			n := at[w][t]
			at[w][t] = next
			next += n
		}
	}
	if err := each(workers, func(w int) error {
		cur := at[w]
		return read(w, func(fp uint64, row uint32) {
			i := cur[fp>>shift]
			x.fps[i], x.ids[i] = fp, row
			cur[fp>>shift]++
		})
	}); err != nil {
		return err
	}
	copy(x.top, x.top[1:]) // each run's end is the next one's start
	x.top[len(x.top)-1] = uint32(rows)
	return nil
}

// headsPerWorker is the fewest rows a goroutine places: fewer are not worth
// a second read of the file.
const headsPerWorker = 1 << 16
