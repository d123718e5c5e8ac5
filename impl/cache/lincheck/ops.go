package lincheck

import (
	"errors"
	"fmt"

	"github.com/xpwc/xpwc/impl/cache"
)

// Kind is the cache call an operation records.
type Kind uint8

const (
	// KindInit is InitializeForProgram(Program).
	KindInit Kind = iota + 1
	// KindLookUp is LookUp of Name in Variant.
	KindLookUp
	// KindReserve is ReserveSpace for a packing of Name (the size depends on
	// the name only). It is the first half of XNNPACK's insert: reserve,
	// pack, look up or insert.
	KindReserve
	// KindInsert is LookUpOrInsert of the client's last reservation, packed
	// with Name in Variant.
	KindInsert
	// KindFinalize, KindSave and KindDelete are Finalize, Save and
	// DeleteProgram(Program).
	KindFinalize
	KindSave
	KindDelete
	// KindInvalidate is Invalidate of Name's weight (a changed source);
	// KindCompact is Compact.
	KindInvalidate
	KindCompact
	// KindRelaunch closes the process's cache instance (the Manager's last
	// reference released) and opens a new one on the same path, as a
	// relaunched process does; the runner initializes Program 0 right
	// after, under the same gate.
	KindRelaunch
	// KindOpen2, KindLookUp2 and KindClose2 are a second process: a cache
	// instance of its own on the same path that opens and initializes a
	// program (loading the committed index), looks up Name in Variant, and
	// closes. It never writes.
	KindOpen2
	KindLookUp2
	KindClose2
	// KindPowerLoss cuts the machine's power: every instance, the second
	// process's too, is gone without closing; the file keeps what was
	// synced and any share of the rest; a new process starts and the
	// runner initializes Program 0 right after, as after a relaunch.
	KindPowerLoss
)

var kindNames = [...]string{
	KindInit: "init", KindLookUp: "lookup", KindReserve: "reserve", KindInsert: "insert",
	KindFinalize: "finalize", KindSave: "save", KindDelete: "delete",
	KindInvalidate: "invalidate", KindCompact: "compact",
	KindRelaunch: "relaunch", KindOpen2: "open2", KindLookUp2: "lookup2", KindClose2: "close2",
	KindPowerLoss: "powerloss",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// keyed reports whether an operation concerns one name only; the others act
// on the whole cache and belong to every partition.
func (k Kind) keyed() bool {
	return k == KindLookUp || k == KindReserve || k == KindInsert || k == KindInvalidate || k == KindLookUp2
}

// Input is an operation's call. Name and Variant select a key (Workload.Key);
// Client is the recording client, which the model needs because a
// reservation belongs to the client that made it.
type Input struct {
	Kind    Kind
	Client  int
	Name    int
	Variant uint8
	Program uint8
}

// ErrClass is the class of an operation's error: the model predicts classes,
// not messages.
type ErrClass uint8

const (
	ErrNone ErrClass = iota
	ErrNotReserved
	ErrProgramActive
	ErrNoProgram
	ErrUnknownProgram
	ErrProgramLive
	// ErrOther is any error the specification never allows (an I/O error
	// from Save in a healthy temp dir, a closed cache).
	ErrOther
)

var errClassNames = [...]string{"", "not-reserved", "program-active", "no-program", "unknown-program", "program-live", "other"}

func (e ErrClass) String() string {
	if int(e) < len(errClassNames) {
		return errClassNames[e]
	}
	return fmt.Sprintf("ErrClass(%d)", uint8(e))
}

// Classify maps an error of the cache API to its class.
func Classify(err error) ErrClass {
	switch {
	case err == nil:
		return ErrNone
	case errors.Is(err, cache.ErrNotReserved), errors.Is(err, cache.ErrAlreadyInserted):
		// One class: the model predicts that no live reservation backs
		// the insert, not which of the two mistakes left none.
		return ErrNotReserved
	case errors.Is(err, cache.ErrProgramActive):
		return ErrProgramActive
	case errors.Is(err, cache.ErrNoProgram):
		return ErrNoProgram
	case errors.Is(err, cache.ErrUnknownProgram):
		return ErrUnknownProgram
	case errors.Is(err, cache.ErrProgramLive):
		return ErrProgramLive
	}
	return ErrOther
}

// Output is an operation's return. Handle is the handle's number in the
// run's HandleTable (0: none). Unknown marks an operation that never
// returned (porcupine issue 8: Return = math.MaxInt64 and an output the
// model accepts whatever the operation did).
type Output struct {
	Unknown bool
	Hit     bool
	Handle  uint64
	Err     ErrClass
}

func describe(in Input, out Output) string {
	var s string
	switch in.Kind {
	case KindInit, KindDelete, KindOpen2:
		s = fmt.Sprintf("%s(p%d)", in.Kind, in.Program)
	case KindLookUp, KindInsert, KindLookUp2:
		s = fmt.Sprintf("%s(n%d.v%d)", in.Kind, in.Name, in.Variant)
	case KindReserve, KindInvalidate:
		s = fmt.Sprintf("%s(n%d)", in.Kind, in.Name)
	default:
		s = in.Kind.String() + "()"
	}
	switch {
	case out.Unknown:
		return s + " -> ?"
	case out.Err != ErrNone:
		return s + " -> " + out.Err.String()
	case (in.Kind == KindLookUp || in.Kind == KindLookUp2) && !out.Hit:
		return s + " -> miss"
	case in.Kind == KindLookUp2:
		return s + " -> hit"
	case out.Handle != 0:
		return fmt.Sprintf("%s -> h%d", s, out.Handle)
	}
	return s + " -> ok"
}
