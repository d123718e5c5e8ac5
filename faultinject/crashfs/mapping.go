package crashfs

import (
	"io/fs"
	"syscall"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/vfs"
)

// Mapping is a shared mapping of a crashfs file. buf is what Bytes returns;
// shadow is buf as last synchronised with the page cache, so that pull can
// tell the caller's stores from stale bytes.
type Mapping struct {
	fs     *FS
	ino    *inode
	from   *File // the description it keeps alive, with its lock
	name   string
	off    int64
	prot   vfs.Prot
	buf    []byte
	shadow []byte
	closed bool
}

var _ vfs.Mapping = (*Mapping)(nil)

// Bytes implements vfs.Mapping. It panics with a *FaultError wrapping
// ErrBusFault when part of the range lies in pages wholly beyond the end of
// file, as the first access would on Linux.
func (m *Mapping) Bytes() []byte {
	m.fs.mu.Lock()
	defer m.fs.mu.Unlock()
	if !m.fs.dead && !m.closed {
		if end := m.validEnd(); end < m.off+int64(len(m.buf)) {
			panic(&FaultError{Err: ErrBusFault, Path: m.name, Off: end})
		}
	}
	return m.buf
}

// validEnd is the end of the pages backed by the file.
func (m *Mapping) validEnd() int64 {
	ps := int64(m.fs.opts.PageSize)
	return (int64(len(m.ino.data)) + ps - 1) / ps * ps
}

// Offset implements vfs.Mapping.
func (m *Mapping) Offset() int64 { return m.off }

func (m *Mapping) enter(op string) error {
	if err := m.fs.alive(); err != nil {
		return err
	}
	if m.closed {
		return &fs.PathError{Op: op, Path: m.name, Err: syscall.EINVAL}
	}
	return nil
}

// Sync implements vfs.Mapping: the mapped range of the page cache becomes
// durable (msync(MS_SYNC)).
func (m *Mapping) Sync() error {
	m.fs.mu.Lock()
	defer m.fs.mu.Unlock()
	if err := m.enter("msync"); err != nil {
		return err
	}
	m.ino.pullRange(m.off, m.off+int64(len(m.buf)))
	end := min(m.off+int64(len(m.buf)), int64(len(m.ino.data)))
	if end > m.off {
		if int64(len(m.ino.durable)) < end {
			m.ino.durable = append(m.ino.durable, make([]byte, end-int64(len(m.ino.durable)))...)
		}
		copy(m.ino.durable[m.off:end], m.ino.data[m.off:end])
	}
	m.fs.record(errorfs.Op{Kind: errorfs.OpMapSync, Path: m.name, Off: m.off, Len: int64(len(m.buf))})
	return nil
}

// Protect implements vfs.Mapping. Stores made while the mapping was
// writable are taken first; stores into it while read-only fault.
func (m *Mapping) Protect(prot vfs.Prot) error {
	m.fs.mu.Lock()
	defer m.fs.mu.Unlock()
	if err := m.enter("mprotect"); err != nil {
		return err
	}
	m.ino.pullOne(m)
	m.prot = prot
	return nil
}

// Close implements vfs.Mapping (munmap): stores made so far reach the page
// cache; the slice must not be used afterwards.
func (m *Mapping) Close() error {
	m.fs.mu.Lock()
	defer m.fs.mu.Unlock()
	if err := m.enter("munmap"); err != nil {
		return err
	}
	m.ino.pullOne(m)
	m.closed = true
	m.from.maps--
	m.from.releaseIfGone()
	for i, x := range m.ino.maps {
		if x == m {
			m.ino.maps = append(m.ino.maps[:i], m.ino.maps[i+1:]...)
			break
		}
	}
	return nil
}

// Coherence. Each mapping's buf is what its owner reads and stores into;
// shadow is buf as of the last synchronisation, private to crashfs. Two
// rules keep the simulation from touching memory a program may be using at
// that moment (which the race detector would report, and which the kernel
// never does): a mapping's buffer is only read while pulling its stores, and
// only the bytes whose value really changes are written into it.

// pull copies the stores made into the live mappings of ino since the last
// seam call into the page cache, then brings the other mappings up to date
// on the bytes that changed. Callers hold fs.mu. A frozen or dead FS takes
// no more stores.
func (ino *inode) pull() { ino.pullRange(0, 1<<62) }

// pullRange is pull for the file range [lo, hi) only: a read of part of the
// file takes only the stores into that part, and so never reads the memory
// of mappings elsewhere in the file, which other processes may be storing
// into at that moment.
func (ino *inode) pullRange(lo, hi int64) {
	f := ino.fsRef
	if f.frozen || f.dead || len(ino.maps) == 0 {
		return
	}
	clo, chi := int64(-1), int64(-1)
	for _, m := range ino.maps {
		if a, b, ok := ino.pullFrom(m, lo, hi); ok {
			if clo < 0 || a < clo {
				clo = a
			}
			chi = max(chi, b)
		}
	}
	if clo >= 0 {
		ino.refresh(clo, chi)
	}
}

// pullOne is pull for the stores of one mapping only: mprotect and munmap
// concern their own mapping.
func (ino *inode) pullOne(m *Mapping) {
	f := ino.fsRef
	if f.frozen || f.dead {
		return
	}
	if lo, hi, ok := ino.pullFrom(m, 0, 1<<62); ok {
		ino.refresh(lo, hi)
	}
}

// pullFrom applies m's stores in the file range [flo, fhi) to the page
// cache and reports the range of file offsets they covered.
func (ino *inode) pullFrom(m *Mapping, flo, fhi int64) (lo, hi int64, changed bool) {
	a := max(flo, m.off) - m.off
	b := min(fhi, m.off+int64(len(m.buf))) - m.off
	if a >= b || string(m.buf[a:b]) == string(m.shadow[a:b]) {
		return 0, 0, false
	}
	// Compare in chunks so that a large mapping with a few stores costs a
	// memcmp, not a byte loop.
	const chunk = 256
	for c := a; c < b; c += chunk {
		e := min(c+chunk, b)
		if string(m.buf[c:e]) == string(m.shadow[c:e]) {
			continue
		}
		for i := c; i < e; i++ {
			if m.buf[i] == m.shadow[i] {
				continue
			}
			off := m.off + i
			if m.prot != vfs.ProtReadWrite {
				panic(&FaultError{Err: ErrProtectionFault, Path: m.name, Off: off})
			}
			m.shadow[i] = m.buf[i]
			if off < int64(len(ino.data)) {
				ino.data[off] = m.buf[i]
			}
			if !changed {
				lo, changed = off, true
			}
			hi = off + 1
		}
	}
	return lo, hi, changed
}

// refresh brings every live mapping up to date with the page cache on the
// file range [lo, hi): bytes of the file, zeros in the tail of its last
// page, poison beyond. Only bytes whose value differs are written.
func (ino *inode) refresh(lo, hi int64) {
	for _, m := range ino.maps {
		a, b := max(lo, m.off), min(hi, m.off+int64(len(m.buf)))
		for off := a; off < b; {
			// Copy the file's bytes a chunk at a time where they differ.
			if off < int64(len(ino.data)) {
				e := min(b, int64(len(ino.data)), off+256)
				want := ino.data[off:e]
				got := m.buf[off-m.off : e-m.off]
				if string(got) != string(want) {
					for i := range want {
						if got[i] != want[i] {
							got[i] = want[i]
						}
					}
				}
				copy(m.shadow[off-m.off:e-m.off], want)
				off = e
				continue
			}
			want := byte(0)
			if off >= m.validEnd() {
				want = poison
			}
			if m.buf[off-m.off] != want {
				m.buf[off-m.off] = want
			}
			m.shadow[off-m.off] = want
			off++
		}
	}
}

// resized brings the mappings up to date after the file size changed from
// old: the bytes between the two sizes, and the tail of the last page,
// change meaning.
func (ino *inode) resized(old int64) {
	ps := int64(ino.fsRef.opts.PageSize)
	lo := min(old, int64(len(ino.data)))
	hi := (max(old, int64(len(ino.data))) + ps - 1) / ps * ps
	var end int64
	for _, m := range ino.maps {
		end = max(end, m.off+int64(len(m.buf)))
	}
	ino.refresh(lo, max(hi, end))
}

// load fills a new mapping's buffer, which nobody else can see yet.
func (m *Mapping) load() {
	n := 0
	if m.off < int64(len(m.ino.data)) {
		n = copy(m.buf, m.ino.data[m.off:])
	}
	valid := int(max(0, min(m.validEnd()-m.off, int64(len(m.buf)))))
	clear(m.buf[n:max(n, valid)])
	for i := max(n, valid); i < len(m.buf); i++ {
		m.buf[i] = poison
	}
	copy(m.shadow, m.buf)
}
