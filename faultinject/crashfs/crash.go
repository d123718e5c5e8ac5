package crashfs

import (
	"iter"
	"math/rand/v2"
	"sort"

	"github.com/xpwc/xpwc/impl/vfs"
)

// ProcessCrash simulates SIGKILL of the process: the returned FS holds the
// page cache as it was at the crash (or at the crash point set by
// SetCrashAfter), mapped stores included. Locks, open files and mappings
// are gone. f is dead afterwards; crashing it again yields the same state.
func (f *FS) ProcessCrash() *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.die()
	n := f.emptyClone()
	inos := map[*inode]*inode{}
	get := func(old *inode) *inode {
		if ino, ok := inos[old]; ok {
			return ino
		}
		ino := &inode{id: old.id, data: clone(old.data), durable: clone(old.durable),
			mtime: old.mtime, dmtime: old.dmtime, mode: old.mode, fsRef: n, locks: newLocks()}
		inos[old] = ino
		return ino
	}
	for p, d := range f.dirs {
		nd := newDir()
		for name, ino := range d.entries {
			nd.entries[name] = get(ino)
		}
		for name, ino := range d.durable {
			nd.durable[name] = get(ino)
		}
		n.dirs[p] = nd
	}
	return n
}

// LossConfig chooses a power-loss outcome.
type LossConfig struct {
	// Seed makes the outcome reproducible.
	Seed uint64
	// Keep is the probability that each unsynced unit survives. 0 leaves
	// exactly the durable state; 1 keeps the whole page cache and the write
	// in flight.
	Keep float64
	_    struct{}
}

// PowerLoss simulates a power cut with LossConfig{Seed: seed, Keep: 0.5}.
func (f *FS) PowerLoss(seed uint64) *FS { return f.PowerLossWith(LossConfig{Seed: seed, Keep: 0.5}) }

// PowerLossWith simulates a power cut: the returned FS holds the durable
// state plus each unsynced unit with probability cfg.Keep. f is dead
// afterwards; any number of outcomes may be drawn from it.
func (f *FS) PowerLossWith(cfg LossConfig) *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.die()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	return f.lossOutcome(f.lossUnits(), func(int) bool { return rng.Float64() < cfg.Keep })
}

// LossUnits is the number of independent keep-or-lose decisions a power
// loss of f makes now: PowerLossOutcomes is exhaustive when 2^LossUnits is
// within its bound.
func (f *FS) LossUnits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.frozen && !f.dead {
		for _, ino := range f.inodes() {
			ino.pull()
		}
	}
	return len(f.lossUnits())
}

// Exhaustive reports whether PowerLossOutcomes with bound max enumerates
// every outcome of a state with units loss units (2^units <= max) rather
// than sampling; units < 62 keeps the shift from overflowing.
func Exhaustive(units, max int) bool { return units < 62 && 1<<units <= max }

// PowerLossOutcomes yields power-loss outcomes of f: all 2^LossUnits of them
// when that is at most max, otherwise the two extremes (nothing kept,
// everything kept) and max-2 outcomes drawn under seed. f is dead once the
// first outcome is drawn.
func (f *FS) PowerLossOutcomes(max int, seed uint64) iter.Seq[*FS] {
	return func(yield func(*FS) bool) {
		f.mu.Lock()
		f.die()
		units := f.lossUnits()
		f.mu.Unlock()
		// f is dead and frozen, so its state no longer changes; the lock
		// is held only while building, never while the caller runs.
		outcome := func(keep func(int) bool) *FS {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.lossOutcome(units, keep)
		}
		if Exhaustive(len(units), max) {
			for mask := uint64(0); mask < 1<<len(units); mask++ {
				if !yield(outcome(func(i int) bool { return mask&(1<<i) != 0 })) {
					return
				}
			}
			return
		}
		rng := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
		for i := 0; i < max; i++ {
			var keep func(int) bool
			switch i {
			case 0:
				keep = func(int) bool { return false }
			case 1:
				keep = func(int) bool { return true }
			default:
				p := rng.Float64()
				keep = func(int) bool { return rng.Float64() < p }
			}
			if !yield(outcome(keep)) {
				return
			}
		}
	}
}

func (f *FS) die() {
	if !f.dead {
		f.freeze()
		f.dead = true
		f.cond.Broadcast()
	}
}

func (f *FS) emptyClone() *FS {
	n := New(f.opts)
	n.dirs = map[string]*dir{}
	n.nextID = f.nextID
	n.clock = f.clock
	return n
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

func newLocks() map[*File]vfs.LockMode { return map[*File]vfs.LockMode{} }

// unit kinds of a power loss decision.
const (
	unitEntry    = iota // a directory entry: volatile binding or durable one
	unitSize            // a file's size: volatile or durable
	unitExtend          // the in-flight write's extension of the size
	unitData            // a range of page-cache bytes
	unitInFlight        // a 512-byte sector of the write in flight
)

type lossUnit struct {
	kind     int
	dir      string
	name     string
	ino      *inode
	off, end int64
}

// lossUnits lists the decisions of a power loss in a fixed order (sorted
// directories and names, inode ids, offsets), so that a seed or a mask
// always means the same outcome. Callers hold mu; f is frozen.
func (f *FS) lossUnits() []lossUnit {
	var units []lossUnit
	dirs := make([]string, 0, len(f.dirs))
	for p := range f.dirs {
		dirs = append(dirs, p)
	}
	sort.Strings(dirs)
	for _, p := range dirs {
		d := f.dirs[p]
		names := map[string]bool{}
		for n := range d.entries {
			names[n] = true
		}
		for n := range d.durable {
			names[n] = true
		}
		sorted := make([]string, 0, len(names))
		for n := range names {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		for _, n := range sorted {
			if d.entries[n] != d.durable[n] {
				units = append(units, lossUnit{kind: unitEntry, dir: p, name: n})
			}
		}
	}
	g := int64(f.opts.LossUnit)
	for _, ino := range f.inodes() {
		vol, dur := ino.data, ino.durable
		if len(vol) != len(dur) {
			units = append(units, lossUnit{kind: unitSize, ino: ino})
		}
		var w *inFlightWrite
		if f.inFlight != nil && f.inFlight.ino == ino && len(f.inFlight.data) > 0 {
			w = f.inFlight
			if end := w.off + int64(len(w.data)); end > int64(len(vol)) {
				units = append(units, lossUnit{kind: unitExtend, ino: ino})
			}
		}
		n := int64(max(len(vol), len(dur)))
		for off := int64(0); off < n; off += g {
			end := min(off+g, n)
			if !equalPadded(vol, dur, off, end) {
				units = append(units, lossUnit{kind: unitData, ino: ino, off: off, end: end})
			}
		}
		if w != nil {
			wend := w.off + int64(len(w.data))
			for off := w.off / sectorSize * sectorSize; off < wend; off += sectorSize {
				units = append(units, lossUnit{kind: unitInFlight, ino: ino, off: max(off, w.off), end: min(off+sectorSize, wend)})
			}
		}
	}
	return units
}

// equalPadded reports whether a and b, each read as zeros past its end,
// agree on [off, end).
func equalPadded(a, b []byte, off, end int64) bool {
	part := func(x []byte) ([]byte, int64) {
		lo, hi := min(off, int64(len(x))), min(end, int64(len(x)))
		return x[lo:hi], end - off - (hi - lo)
	}
	pa, za := part(a)
	pb, zb := part(b)
	if za > zb {
		pa, pb = pb, pa
	}
	// pa is the longer part; it must equal pb and be zero past it.
	if string(pa[:len(pb)]) != string(pb) {
		return false
	}
	for _, c := range pa[len(pb):] {
		if c != 0 {
			return false
		}
	}
	return true
}

// lossOutcome builds the FS a power loss leaves when keep(i) tells whether
// unit i survives. Callers hold mu.
func (f *FS) lossOutcome(units []lossUnit, keep func(int) bool) *FS {
	n := f.emptyClone()
	kept := make([]bool, len(units))
	for i := range units {
		kept[i] = keep(i)
	}
	// Sizes first: durable, or volatile if its size unit survives, extended
	// by the write in flight if that unit survives.
	sizes := map[*inode]int64{}
	for _, ino := range f.inodes() {
		sizes[ino] = int64(len(ino.durable))
	}
	hasSizeUnit := map[*inode]bool{}
	for i, u := range units {
		if u.kind == unitSize {
			hasSizeUnit[u.ino] = true
			if kept[i] {
				sizes[u.ino] = int64(len(u.ino.data))
			}
		}
	}
	for _, ino := range f.inodes() {
		if !hasSizeUnit[ino] {
			sizes[ino] = int64(len(ino.data))
		}
	}
	for i, u := range units {
		if u.kind == unitExtend && kept[i] {
			sizes[u.ino] = max(sizes[u.ino], f.inFlight.off+int64(len(f.inFlight.data)))
		}
	}
	data := map[*inode][]byte{}
	for _, ino := range f.inodes() {
		b := make([]byte, sizes[ino])
		copy(b, ino.durable)
		data[ino] = b
	}
	for i, u := range units {
		if !kept[i] {
			continue
		}
		b := data[u.ino]
		switch u.kind {
		case unitData:
			for j := u.off; j < u.end && j < int64(len(b)); j++ {
				if j < int64(len(u.ino.data)) {
					b[j] = u.ino.data[j]
				} else {
					b[j] = 0
				}
			}
		case unitInFlight:
			for j := u.off; j < u.end && j < int64(len(b)); j++ {
				b[j] = f.inFlight.data[j-f.inFlight.off]
			}
		}
	}
	inos := map[*inode]*inode{}
	get := func(old *inode) *inode {
		if ino, ok := inos[old]; ok {
			return ino
		}
		d := data[old]
		ino := &inode{id: old.id, data: d, durable: clone(d), mtime: old.dmtime, dmtime: old.dmtime,
			mode: old.mode, fsRef: n, locks: newLocks()}
		inos[old] = ino
		return ino
	}
	entryKept := map[[2]string]bool{}
	for i, u := range units {
		if u.kind == unitEntry && kept[i] {
			entryKept[[2]string{u.dir, u.name}] = true
		}
	}
	for p, d := range f.dirs {
		nd := newDir()
		n.dirs[p] = nd
		names := map[string]bool{}
		for name := range d.entries {
			names[name] = true
		}
		for name := range d.durable {
			names[name] = true
		}
		for name := range names {
			src := d.durable[name]
			if entryKept[[2]string{p, name}] {
				src = d.entries[name]
			}
			if src != nil {
				nd.entries[name] = get(src)
				nd.durable[name] = nd.entries[name]
			}
		}
	}
	return n
}
