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
	m.ino.pull()
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
	m.ino.pull()
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
	m.ino.pull()
	m.closed = true
	for i, x := range m.ino.maps {
		if x == m {
			m.ino.maps = append(m.ino.maps[:i], m.ino.maps[i+1:]...)
			break
		}
	}
	return nil
}

// pull copies the stores made into every live mapping of ino since the last
// seam call into the page cache, then refreshes the other mappings from it.
// Callers hold fs.mu. A frozen or dead FS takes no more stores.
func (ino *inode) pull() {
	f := ino.fsRef
	if f.frozen || f.dead || len(ino.maps) == 0 {
		return
	}
	changed := false
	for _, m := range ino.maps {
		if string(m.buf) == string(m.shadow) {
			continue
		}
		changed = true
		// Compare in chunks so that a large mapping with a few stores
		// costs a memcmp, not a byte loop.
		const chunk = 256
		for lo := 0; lo < len(m.buf); lo += chunk {
			hi := min(lo+chunk, len(m.buf))
			if string(m.buf[lo:hi]) == string(m.shadow[lo:hi]) {
				continue
			}
			for i := lo; i < hi; i++ {
				if m.buf[i] == m.shadow[i] {
					continue
				}
				off := m.off + int64(i)
				if m.prot != vfs.ProtReadWrite {
					panic(&FaultError{Err: ErrProtectionFault, Path: m.name, Off: off})
				}
				if off < int64(len(ino.data)) {
					ino.data[off] = m.buf[i]
				}
			}
		}
	}
	if changed {
		ino.push()
	}
}

// push copies the page cache into every live mapping of ino; bytes beyond
// the end of file are poisoned. Callers hold fs.mu.
func (ino *inode) push() {
	for _, m := range ino.maps {
		m.load()
	}
}

// pushRange refreshes the mappings after a write of [off, end) that did not
// change the file size: only the written bytes are copied.
func (ino *inode) pushRange(off, end int64) {
	for _, m := range ino.maps {
		lo, hi := max(off, m.off), min(end, m.off+int64(len(m.buf)))
		if lo >= hi {
			continue
		}
		copy(m.buf[lo-m.off:hi-m.off], ino.data[lo:hi])
		copy(m.shadow[lo-m.off:hi-m.off], ino.data[lo:hi])
	}
}

func (m *Mapping) load() {
	n := 0
	if m.off < int64(len(m.ino.data)) {
		n = copy(m.buf, m.ino.data[m.off:])
	}
	// The tail of the last page reads as zeros, as on Linux; whole pages
	// beyond the end of file are poisoned (Bytes panics on them).
	valid := int(max(0, min(m.validEnd()-m.off, int64(len(m.buf)))))
	clear(m.buf[n:max(n, valid)])
	for i := max(n, valid); i < len(m.buf); i++ {
		m.buf[i] = poison
	}
	copy(m.shadow, m.buf)
}
