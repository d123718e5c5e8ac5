package sim

import (
	"os"
	"strings"

	"github.com/xpwc/xpwc/spec"
)

// foreign scribbles on the live file outside the protocol: one data byte
// of a committed entry, or the index so that no commit loads (G7): the
// generation of both v3 commit slots, or a v2 file's footer magic.
func (w *world) foreign(op spec.Op) error {
	off := int64(0)
	var v2 *spec.V2File
	pf, err := w.parse()
	if err != nil {
		// ExecuTorch's v2 file (an adapter's own format when it says v2).
		var err2 error
		if v2, err2 = w.parseV2(); err2 != nil {
			return &HarnessError{Op: op, Msg: "the file does not parse: " + err.Error()}
		}
	}
	if op.Foreign == spec.ForeignData {
		found := false
		if v2 != nil {
			// A v2 name is the weight's and the bias's, run together.
			for _, e := range v2.Entries {
				if strings.HasPrefix(e.Key.Weight, weightName(int(op.Name))) {
					off, found = int64(e.Offset), true
				}
			}
		} else {
			for _, e := range pf.Entries {
				if e.Key.Weight == weightName(int(op.Name)) {
					off, found = int64(e.Offset), true
				}
			}
		}
		if !found {
			return &HarnessError{Op: op, Msg: "the file lists no entry for it"}
		}
	}
	f, err := w.base.OpenFile(w.path, os.O_RDWR, 0)
	if err != nil {
		return &HarnessError{Op: op, Msg: err.Error()}
	}
	defer func() { _ = f.Close() }()
	if op.Foreign == spec.ForeignIndex && v2 != nil {
		// Zero the footer's magic: no trailer parses.
		var zero [4]byte
		if _, err := f.WriteAt(zero[:], v2.Size-8); err != nil {
			return &HarnessError{Op: op, Msg: err.Error()}
		}
	} else if op.Foreign == spec.ForeignIndex {
		// Zero the generation of both slots, so both fail their CRC: not a
		// toggle, which a second scribble would undo and bring an older
		// commit back, and not the magic, without which the file would no
		// longer be recognisably a cache file and would be left alone as
		// foreign (docs/paths.md) rather than rebuilt.
		var zero [8]byte
		for _, o := range []int64{16, spec.V3SlotSize + 16} {
			if _, err := f.WriteAt(zero[:], o); err != nil {
				return &HarnessError{Op: op, Msg: err.Error()}
			}
		}
	} else {
		var b [1]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			return &HarnessError{Op: op, Msg: err.Error()}
		}
		b[0] ^= 0xA5
		if _, err := f.WriteAt(b[:], off); err != nil {
			return &HarnessError{Op: op, Msg: err.Error()}
		}
	}
	// Durable, as the model has it: a power loss must not undo the
	// scribble.
	if err := f.Sync(); err != nil {
		return &HarnessError{Op: op, Msg: err.Error()}
	}
	return nil
}
