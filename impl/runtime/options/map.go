package options

import (
	"slices"
	"strings"
)

// Map is a set of per-backend option lists, keyed by backend id, in the
// order the backends were first set.
//
// Unlike ExecuTorch's LoadBackendOptionsMap, whose entries are non-owning
// spans over the caller's arrays, a Map owns copies of everything handed to
// Set and hands out copies from Get, so no caller can change a Map's contents
// except through its methods. Module.Load still copies the Map itself
// (Clone): the caller may keep using or Clear its map after the load (G6,
// ExecuTorch PR 19673).
//
// The zero Map is empty and ready to use. A Map is not safe for concurrent
// mutation.
type Map struct {
	entries []entry
}

type entry struct {
	backend string
	opts    []Option
}

// Set validates id and opts against the limits and stores a copy of opts
// for backend id, replacing what id had before (as ExecuTorch's set_options
// does). On error the map is unchanged.
func (m *Map) Set(id string, opts ...Option) error {
	if err := validate(id, opts); err != nil {
		return err
	}
	cp := slices.Clone(opts)
	for i := range m.entries {
		if m.entries[i].backend == id {
			m.entries[i].opts = cp
			return nil
		}
	}
	if len(m.entries) >= MaxBackends {
		return ErrTooManyBackends
	}
	m.entries = append(m.entries, entry{backend: id, opts: cp})
	return nil
}

func validate(id string, opts []Option) error {
	switch {
	case id == "":
		return ErrEmptyBackendID
	case len(id) > MaxBackendIDLen:
		return &LengthError{Err: ErrBackendIDTooLong, Backend: id, Len: len(id), Max: MaxBackendIDLen}
	case strings.IndexByte(id, 0) >= 0:
		return ErrNUL
	}
	for i, o := range opts {
		switch {
		case o.Key == "":
			return ErrEmptyKey
		case len(o.Key) > MaxKeyLen:
			return &LengthError{Err: ErrKeyTooLong, Backend: id, Key: o.Key, Len: len(o.Key), Max: MaxKeyLen}
		case strings.IndexByte(o.Key, 0) >= 0:
			return ErrNUL
		case o.Value.kind == KindInvalid:
			return ErrInvalidValue
		}
		if s, ok := o.Value.AsString(); ok {
			if len(s) > MaxStringLen {
				return &LengthError{Err: ErrValueTooLong, Backend: id, Key: o.Key, Len: len(s), Max: MaxStringLen}
			}
			if strings.IndexByte(s, 0) >= 0 {
				return ErrNUL
			}
		}
		for _, p := range opts[:i] {
			if p.Key == o.Key {
				return ErrDuplicateKey
			}
		}
	}
	return nil
}

// Get returns a copy of backend id's options and whether id is present.
func (m *Map) Get(id string) ([]Option, bool) {
	for _, e := range m.entries {
		if e.backend == id {
			return slices.Clone(e.opts), true
		}
	}
	return nil, false
}

// Has reports whether backend id has an entry.
func (m *Map) Has(id string) bool {
	_, ok := m.Get(id)
	return ok
}

// Len is the number of backends.
func (m *Map) Len() int { return len(m.entries) }

// Backends lists the backend ids in the order they were first set.
func (m *Map) Backends() []string {
	ids := make([]string, len(m.entries))
	for i, e := range m.entries {
		ids[i] = e.backend
	}
	return ids
}

// Clear removes every backend.
func (m *Map) Clear() { m.entries = nil }

// Clone returns a deep copy of m that shares nothing with it.
func (m *Map) Clone() *Map {
	c := &Map{entries: make([]entry, len(m.entries))}
	for i, e := range m.entries {
		c.entries[i] = entry{backend: e.backend, opts: slices.Clone(e.opts)}
	}
	return c
}

// Lookup returns the value of key for backend id.
func (m *Map) Lookup(id, key string) (Value, bool) {
	for _, e := range m.entries {
		if e.backend != id {
			continue
		}
		for _, o := range e.opts {
			if o.Key == key {
				return o.Value, true
			}
		}
	}
	return Value{}, false
}
