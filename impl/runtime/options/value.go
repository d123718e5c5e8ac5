package options

import "strconv"

// Kind is the type of an option value: ExecuTorch's OptionValue is a
// variant of bool, int and a 256-byte string.
type Kind uint8

const (
	KindInvalid Kind = iota
	KindBool
	KindInt
	KindString
)

func (k Kind) String() string {
	switch k {
	case KindBool:
		return "bool"
	case KindInt:
		return "int"
	case KindString:
		return "string"
	}
	return "invalid"
}

// Value is one option value. It is a plain value (strings in Go are
// immutable), so copying an Option copies it entirely.
type Value struct {
	kind Kind
	b    bool
	i    int64
	s    string
}

// Bool, Int and String make values of each kind.
func Bool(b bool) Value     { return Value{kind: KindBool, b: b} }
func Int(i int64) Value     { return Value{kind: KindInt, i: i} }
func String(s string) Value { return Value{kind: KindString, s: s} }

// Kind reports the kind of v; the zero Value is KindInvalid.
func (v Value) Kind() Kind { return v.kind }

// AsBool, AsInt and AsString return the value and whether v is of that kind.
func (v Value) AsBool() (bool, bool)     { return v.b, v.kind == KindBool }
func (v Value) AsInt() (int64, bool)     { return v.i, v.kind == KindInt }
func (v Value) AsString() (string, bool) { return v.s, v.kind == KindString }

func (v Value) String() string {
	switch v.kind {
	case KindBool:
		return strconv.FormatBool(v.b)
	case KindInt:
		return strconv.FormatInt(v.i, 10)
	case KindString:
		return strconv.Quote(v.s)
	}
	return "<invalid>"
}

// Option is one keyed value of a backend.
type Option struct {
	Key   string
	Value Value
}
