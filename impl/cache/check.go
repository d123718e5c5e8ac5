package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/xpwc/xpwc/spec"
)

// ErrInconsistent is matched by every error Check returns.
var ErrInconsistent = errors.New("cache: inconsistent state")

// Check verifies the cache's invariants, in the manner of bbolt's tx.Check:
// the index, handles and program references agree; file entries are
// page-aligned and disjoint; and, when the file's
// newest commit is the one this cache last loaded or wrote, that commit
// lists exactly the committed entries. Tests run it at cleanup.
func (c *Cache) Check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInconsistent, fmt.Sprintf(format, args...))
	}
	if want := c.programs[c.active]; c.activeIDs != want || c.active != "" && want == nil {
		return bad("the active program %q's set is not its entry in programs", c.active)
	}
	refs := map[uint64]int{}
	for p, set := range c.programs {
		for id := range set.all() {
			if c.handles.get(id) == nil {
				return bad("program %q references released entry %d", p, id)
			}
			refs[id]++
		}
	}
	for id, e := range c.handles.all() {
		if e.id != id {
			return bad("handle %d names entry %d", id, e.id)
		}
		if int(e.refs) != refs[id] {
			return bad("entry %q has %d refs, programs hold %d", e.key().Name(), e.refs, refs[id])
		}
		if !e.indexed && e.refs == 0 {
			return bad("entry %q is unreachable but not released", e.key().Name())
		}
		if e.indexed && c.byName.get(e.key().Weight, e.key().Bias) != e {
			return bad("entry %q is marked indexed but not in the index", e.key().Name())
		}
		if e.committed && (!e.indexed || e.place != inFile) {
			return bad("entry %q is committed but not an indexed file entry", e.key().Name())
		}
	}
	byOff := map[int64]*entry{}
	align := c.align()
	for e := range c.byName.all() {
		n := c.name(*e.key())
		if c.handles.get(e.id) != e || !e.indexed || c.byName.get(e.key().Weight, e.key().Bias) != e {
			return bad("index entry %q is not a live handle", n)
		}
		if e.place != inFile || !e.persist {
			continue
		}
		if e.off()%align != 0 {
			return bad("entry %q at misaligned offset %d", n, e.off())
		}
		if o := byOff[e.off()]; o != nil {
			return bad("entries %q and %q share offset %d", n, c.name(*o.key()), e.off())
		}
		byOff[e.off()] = e
	}
	if c.w != nil || c.opts.Path == "" || c.disk.size == 0 {
		return nil
	}
	return c.checkFile(bad)
}

// checkFile compares the committed entries with the file's newest commit,
// when that commit is still the one this cache knows.
func (c *Cache) checkFile(bad func(string, ...any) error) error {
	f, err := c.openLive(os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNotRegular) {
		return nil // removed or replaced by another program
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	cf, err := c.parseFile(f)
	if err != nil {
		return bad("committed file does not parse: %v", err)
	}
	if cf.size != c.disk.size || cf.generation != c.disk.generation {
		return nil // another process committed since
	}
	listed := map[entryName]spec.Entry{}
	for _, d := range cf.entries {
		listed[c.name(d.Key)] = d
	}
	for e := range c.byName.all() {
		if !e.committed {
			continue
		}
		n := c.name(*e.key())
		d, ok := listed[n]
		if !ok {
			return bad("committed entry %q is not in the file's index", n)
		}
		if !c.sameData(e, d) || uint64(e.off()) != d.Offset {
			return bad("committed entry %q differs from the file's index", n)
		}
		delete(listed, n)
	}
	for n := range listed {
		if _, dropped := c.tombstones[n]; !dropped && c.byName.get(n.w, n.b) == nil {
			return bad("file lists %q, which the cache neither holds nor dropped", n)
		}
	}
	return nil
}
