package model

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leaves calls f with every scalar field of v (a pointer to a struct or
// array), in declaration order.
func leaves(v reflect.Value, f func(reflect.Value)) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			leaves(v.Field(i), f)
		}
	case reflect.Array:
		for i := range v.Len() {
			leaves(v.Index(i), f)
		}
	default:
		f(v)
	}
}

// The encoding holds every field of State: one byte per field, and a state
// whose fields all differ decodes back to itself. A field added to State
// but not to Encode fails here.
func TestEncodingCoversEveryField(t *testing.T) {
	var s State
	n := 0
	leaves(reflect.ValueOf(&s).Elem(), func(v reflect.Value) {
		n++
		switch v.Kind() {
		case reflect.Bool:
			v.SetBool(n%2 == 0)
		case reflect.Uint8:
			v.SetUint(uint64(n))
		default:
			t.Fatalf("field of kind %s: the encoding writes one byte per field", v.Kind())
		}
	})
	require.Equal(t, EncodedSize, n)
	var e Encoding
	s.Encode(&e)
	assert.Equal(t, s, e.Decode())
	// Each field is its own byte: changing one changes the encoding at one
	// place, in declaration order.
	i := 0
	leaves(reflect.ValueOf(&s).Elem(), func(v reflect.Value) {
		c := s
		leaves(reflect.ValueOf(&c).Elem(), func(w reflect.Value) {
			if w.UnsafeAddr()-reflect.ValueOf(&c).Pointer() == v.UnsafeAddr()-reflect.ValueOf(&s).Pointer() {
				if w.Kind() == reflect.Bool {
					w.SetBool(!w.Bool())
				} else {
					w.SetUint(w.Uint() + 100)
				}
			}
		})
		var f Encoding
		c.Encode(&f)
		for j := range e {
			assert.Equal(t, j == i, e[j] != f[j], "field %d, byte %d", i, j)
		}
		i++
	})
}

// Every state the model reaches from a few scenarios round-trips through
// its encoding, and equal fingerprints come only from equal states.
func TestEncodingRoundTripsReachedStates(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, ref(t), b, coldLaunch+"init proc=B program=P2\nlookup proc=B name=w0\n")
	seen := map[uint64]State{}
	for _, o := range outs {
		for _, op := range Alphabet(b) {
			for _, x := range Step(ref(t), b, o.Next, op) {
				var e Encoding
				x.Next.Encode(&e)
				require.Equal(t, x.Next, e.Decode())
				fp := e.Fingerprint()
				if prev, ok := seen[fp]; ok {
					require.Equal(t, prev, x.Next)
				}
				seen[fp] = x.Next
			}
		}
	}
	assert.Greater(t, len(seen), 20)
}
