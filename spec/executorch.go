package spec

import (
	"encoding/binary"
	"io"
)

// ExecuTorchVerdict is what ExecuTorch's loader (load_packed_cache, v2,
// docs/format.md "Checks ParseV2 makes", column ExecuTorch) does with a
// file: load it, or reject it at one of its checks. A rejected file is
// then truncated by ExecuTorch's fresh write, losing every entry, so the
// verdict tells whether a file may be handed to ExecuTorch.
type ExecuTorchVerdict struct {
	Accepts bool
	// Entries is the number of records it would read (it stops at the
	// declared count or when fewer than 4 bytes remain before the footer;
	// a later record of a name it has replaces the earlier one).
	Entries int
	// Rule names the check that rejects the file, Off the byte offset of
	// the field it reads.
	Rule string
	Off  int64
}

// ExecuTorchMaxIndex is the longest index ExecuTorchLoad walks: its cost
// is one step per record, and a forged footer can declare billions of
// records over a sparse file's holes (which ExecuTorch's loader would walk).
const ExecuTorchMaxIndex = 256 << 20

// ExecuTorchLoad applies ExecuTorch's loader checks, in its order: size at
// least 20, magic, version 2, index_start < size-20, then per entry while
// entries are declared and 4 bytes remain before the footer: the record
// fits (name_len + 20 bytes after the length), file_offset < index_start,
// data_size <= index_start - file_offset. It checks nothing else (no
// alignment, overlap, names or trailing bytes: ParseV2 is stricter), and
// counts the records it reads (ExecuTorch keeps one entry per distinct
// name). An index longer than ExecuTorchMaxIndex is not walked:
// ErrIndexTooLarge. Any other error is an I/O error of r.
func ExecuTorchLoad(r io.ReaderAt, size int64) (ExecuTorchVerdict, error) {
	reject := func(rule string, off int64) (ExecuTorchVerdict, error) {
		return ExecuTorchVerdict{Rule: rule, Off: off}, nil
	}
	if size < V2FooterSize {
		return reject("size < 20", 0)
	}
	foot := size - V2FooterSize
	var fb [V2FooterSize]byte
	if err := readFull(r, foot, fb[:], "footer"); err != nil {
		return ExecuTorchVerdict{}, err
	}
	f := DecodeV2Footer(fb)
	switch {
	case f.Magic != V2Magic:
		return reject("magic", foot+12)
	case f.Version != V2Version:
		return reject("version", foot+16)
	case f.IndexStart >= uint64(foot):
		return reject("index_start < size-20", foot)
	case uint64(foot)-f.IndexStart > ExecuTorchMaxIndex:
		return ExecuTorchVerdict{}, ferr(foot, "index_start", f.IndexStart, ErrIndexTooLarge)
	}
	le := binary.LittleEndian
	w := newWindow(r, int64(f.IndexStart), foot)
	records := 0
	pos := int64(f.IndexStart)
	for i := uint32(0); i < f.Count && foot-pos >= 4; i++ {
		b, err := w.at(pos, 4, "name_len")
		if err != nil {
			return ExecuTorchVerdict{}, err
		}
		nameLen := int64(le.Uint32(b))
		if nameLen+20 > foot-pos-4 {
			return reject("entry inside the index", pos)
		}
		// Only the fixed fields after the name are checked; the name may
		// be longer than any window, so it is skipped, not read.
		b, err = w.at(pos+4+nameLen, 16, "entry")
		if err != nil {
			return ExecuTorchVerdict{}, err
		}
		off, sz := le.Uint64(b), le.Uint64(b[8:])
		if off >= f.IndexStart || sz > f.IndexStart-off {
			return reject("file_offset < index_start and data_size <= index_start - file_offset", pos+4+nameLen)
		}
		records++
		pos += 4 + nameLen + 20
	}
	return ExecuTorchVerdict{Accepts: true, Entries: records}, nil
}
