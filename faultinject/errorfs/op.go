package errorfs

import (
	"fmt"
	"strings"
)

// OpKind names one seam method. The enum is exhaustive over every method of
// vfs.FS, vfs.File and vfs.Mapping that can return an error; the three that
// cannot (FS.PageSize, File.Name, Mapping.Bytes/Offset) have no kind, since
// nothing could be injected into them.
type OpKind int

const (
	// OpOpen is FS.OpenFile without os.O_CREATE.
	OpOpen OpKind = iota
	// OpCreate is FS.OpenFile with os.O_CREATE: split from OpOpen so that a
	// read-only directory (EROFS/EACCES on create) can be modelled without
	// failing the opens of existing files.
	OpCreate
	OpRename
	OpRemove
	OpStat
	OpReadDir
	OpSyncDir

	OpReadAt
	OpWriteAt
	OpClose
	OpSize
	OpTruncate
	OpAllocate
	OpSync
	OpSyncData
	OpMap
	OpLock
	OpUnlock

	OpMapSync
	OpMapProtect
	OpMapClose

	// Added later, at the end so that existing kinds keep their numbers.
	OpResolve
	OpChmod
	OpFstat

	numOpKinds
)

var opKindNames = [numOpKinds]string{
	OpOpen:       "open",
	OpCreate:     "create",
	OpRename:     "rename",
	OpRemove:     "remove",
	OpStat:       "stat",
	OpReadDir:    "readdir",
	OpSyncDir:    "syncdir",
	OpReadAt:     "read",
	OpWriteAt:    "write",
	OpClose:      "close",
	OpSize:       "size",
	OpTruncate:   "truncate",
	OpAllocate:   "allocate",
	OpSync:       "sync",
	OpSyncData:   "syncdata",
	OpMap:        "map",
	OpLock:       "lock",
	OpUnlock:     "unlock",
	OpMapSync:    "msync",
	OpMapProtect: "mprotect",
	OpMapClose:   "munmap",
	OpResolve:    "resolve",
	OpChmod:      "chmod",
	OpFstat:      "fstat",
}

// writeKinds are the kinds that change file contents, names or durability.
// Everything else is a read: it may fail, but failing it never leaves the
// file system different from before the call.
var writeKinds = [numOpKinds]bool{
	OpCreate:   true,
	OpRename:   true,
	OpRemove:   true,
	OpSyncDir:  true,
	OpWriteAt:  true,
	OpTruncate: true,
	OpAllocate: true,
	OpSync:     true,
	OpSyncData: true,
	OpMapSync:  true,
	OpChmod:    true,
}

func init() {
	// A kind added without a name would print as "" and could not be parsed
	// back from a DSL string; fail at start-up rather than in a test log.
	for k := OpKind(0); k < numOpKinds; k++ {
		if opKindNames[k] == "" {
			panic(fmt.Sprintf("errorfs: op kind %d has no name", int(k)))
		}
	}
}

func (k OpKind) String() string {
	if k >= 0 && k < numOpKinds {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// IsWrite reports whether k changes file contents, names or durability.
func (k OpKind) IsWrite() bool { return k >= 0 && k < numOpKinds && writeKinds[k] }

// AllOpKinds lists every kind in enum order.
func AllOpKinds() []OpKind {
	out := make([]OpKind, numOpKinds)
	for i := range out {
		out[i] = OpKind(i)
	}
	return out
}

// ParseOpKind is the inverse of OpKind.String.
func ParseOpKind(s string) (OpKind, error) {
	for k := OpKind(0); k < numOpKinds; k++ {
		if opKindNames[k] == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown op kind %q", ErrSyntax, s)
}

// Op describes one seam call, as seen by an Injector before the call runs.
type Op struct {
	Kind OpKind
	// Path is the name the call is about: the file name for File and Mapping
	// calls, the directory for ReadDir and SyncDir, the old name for Rename.
	Path string
	// NewPath is the destination of a Rename, empty otherwise.
	NewPath string
	// Off is the file offset of ReadAt, WriteAt, Allocate and Map, the new
	// size of Truncate, and zero otherwise.
	Off int64
	// Len is the byte count of ReadAt, WriteAt, Allocate and Map.
	Len int64
}

func (o Op) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", o.Kind, o.Path)
	if o.NewPath != "" {
		fmt.Fprintf(&b, " -> %s", o.NewPath)
	}
	switch o.Kind {
	case OpReadAt, OpWriteAt, OpAllocate, OpMap:
		fmt.Fprintf(&b, " [%d,+%d)", o.Off, o.Len)
	case OpTruncate:
		fmt.Fprintf(&b, " size=%d", o.Off)
	}
	return b.String()
}
