package options

import (
	"errors"
	"fmt"
)

// Sentinels, matched with errors.Is. The typed errors below unwrap to them
// and carry the offending name and length.
var (
	// ErrTooManyBackends is returned by Map.Set when the map already holds
	// MaxBackends backends and the id is a new one.
	ErrTooManyBackends = errors.New("options: too many backends")
	// ErrEmptyBackendID is returned by Map.Set for an empty backend id.
	ErrEmptyBackendID = errors.New("options: empty backend id")
	// ErrBackendIDTooLong is returned by Map.Set for an id over
	// MaxBackendIDLen bytes (see *LengthError).
	ErrBackendIDTooLong = errors.New("options: backend id too long")
	// ErrEmptyKey is returned by Map.Set for an option with an empty key.
	ErrEmptyKey = errors.New("options: empty option key")
	// ErrKeyTooLong is returned by Map.Set for a key over MaxKeyLen bytes
	// (see *LengthError).
	ErrKeyTooLong = errors.New("options: option key too long")
	// ErrValueTooLong is returned by Map.Set for a string value over
	// MaxStringLen bytes (see *LengthError).
	ErrValueTooLong = errors.New("options: string value too long")
	// ErrNUL is returned by Map.Set when an id, key or string value holds a
	// NUL byte: ExecuTorch reads them as C strings, so the bytes after the
	// NUL would vanish on the way.
	ErrNUL = errors.New("options: NUL byte in id, key or value")
	// ErrDuplicateKey is returned by Map.Set when one backend's option list
	// names a key twice; which one wins would otherwise depend on the reader.
	ErrDuplicateKey = errors.New("options: duplicate option key")
	// ErrInvalidValue is returned by Map.Set for a zero Value (no kind).
	ErrInvalidValue = errors.New("options: option has no value")
	// ErrWrongType is returned by the typed getters and by backends when a
	// key holds a value of another kind (see *TypeError).
	ErrWrongType = errors.New("options: option has the wrong type")
)

// LengthError reports an id, key or value longer than its limit. Backend is
// the backend id the option was set for; Key is empty for an id error.
type LengthError struct {
	Err     error // ErrBackendIDTooLong, ErrKeyTooLong or ErrValueTooLong
	Backend string
	Key     string
	Len     int
	Max     int
}

func (e *LengthError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%v: backend id %q is %d bytes, limit %d", e.Err, e.Backend, e.Len, e.Max)
	}
	return fmt.Sprintf("%v: backend %q key %q: %d bytes, limit %d", e.Err, e.Backend, e.Key, e.Len, e.Max)
}

func (e *LengthError) Unwrap() error { return e.Err }

// TypeError reports a key whose value is not of the kind its reader needs.
type TypeError struct {
	Backend string
	Key     string
	Want    Kind
	Got     Kind
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("%v: backend %q key %q is %v, want %v", ErrWrongType, e.Backend, e.Key, e.Got, e.Want)
}

func (e *TypeError) Unwrap() error { return ErrWrongType }
