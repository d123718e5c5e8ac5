package options

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetLimitsAreTypedErrors(t *testing.T) {
	long := func(n int) string { return strings.Repeat("k", n) }
	for _, tc := range []struct {
		name    string
		id      string
		opts    []Option
		want    error
		wantLen int
	}{
		{"id at limit", long(MaxBackendIDLen), nil, nil, 0},
		{"id over limit", long(MaxBackendIDLen + 1), nil, ErrBackendIDTooLong, MaxBackendIDLen + 1},
		{"empty id", "", nil, ErrEmptyBackendID, 0},
		{"key at limit", "b", []Option{{long(MaxKeyLen), Bool(true)}}, nil, 0},
		// 64 bytes passed ExecuTorch's check and was silently cut to 63.
		{"key of 64 bytes", "b", []Option{{long(64), Bool(true)}}, ErrKeyTooLong, 64},
		{"empty key", "b", []Option{{"", Int(1)}}, ErrEmptyKey, 0},
		{"string at limit", "b", []Option{{"p", String(long(MaxStringLen))}}, nil, 0},
		{"string over limit", "b", []Option{{"p", String(long(MaxStringLen + 1))}}, ErrValueTooLong, MaxStringLen + 1},
		{"NUL in value", "b", []Option{{"p", String("a\x00b")}}, ErrNUL, 0},
		{"NUL in key", "b", []Option{{"a\x00", Int(1)}}, ErrNUL, 0},
		{"NUL in id", "b\x00", nil, ErrNUL, 0},
		{"zero value", "b", []Option{{"p", Value{}}}, ErrInvalidValue, 0},
		{"duplicate key", "b", []Option{{"p", Int(1)}, {"p", Int(2)}}, ErrDuplicateKey, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Map
			err := m.Set(tc.id, tc.opts...)
			if tc.want == nil {
				require.NoError(t, err)
				require.Equal(t, 1, m.Len())
				got, ok := m.Get(tc.id)
				require.True(t, ok)
				require.Equal(t, len(tc.opts), len(got))
				for i := range got {
					// Nothing was cut: the stored key and value are whole.
					assert.Equal(t, tc.opts[i], got[i])
				}
				return
			}
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, 0, m.Len(), "a failed Set leaves the map unchanged")
			if tc.wantLen > 0 {
				var le *LengthError
				require.ErrorAs(t, err, &le)
				assert.Equal(t, tc.wantLen, le.Len)
				assert.Contains(t, err.Error(), fmt.Sprint(tc.wantLen))
			}
		})
	}
}

func TestTooManyBackends(t *testing.T) {
	var m Map
	for i := range MaxBackends {
		require.NoError(t, m.Set(fmt.Sprintf("b%d", i), Option{"k", Int(int64(i))}))
	}
	err := m.Set("ninth", Option{"k", Int(9)})
	require.ErrorIs(t, err, ErrTooManyBackends)
	assert.Equal(t, MaxBackends, m.Len())
	assert.False(t, m.Has("ninth"))
	// Replacing an existing backend is still allowed at capacity.
	require.NoError(t, m.Set("b3", Option{"k", Int(33)}))
	v, ok := m.Lookup("b3", "k")
	require.True(t, ok)
	got, _ := v.AsInt()
	assert.Equal(t, int64(33), got)
}

func TestSetCopiesCallerSlice(t *testing.T) {
	var m Map
	opts := []Option{{"path", String("/a")}}
	require.NoError(t, m.Set("b", opts...))
	opts[0].Value = String("/other")
	got, _ := m.Get("b")
	got[0].Value = Int(1)
	v, _ := m.Lookup("b", "path")
	s, ok := v.AsString()
	require.True(t, ok)
	assert.Equal(t, "/a", s)
}

func TestCloneIsDeep(t *testing.T) {
	var m Map
	require.NoError(t, m.Set("b", Option{"x", Bool(true)}))
	c := m.Clone()
	require.NoError(t, m.Set("b", Option{"x", Bool(false)}))
	require.NoError(t, m.Set("c", Option{"y", Int(2)}))
	m.Clear()
	assert.Equal(t, 1, c.Len())
	v, ok := c.Lookup("b", "x")
	require.True(t, ok)
	b, _ := v.AsBool()
	assert.True(t, b)
	assert.Equal(t, []string{"b"}, c.Backends())
}

func TestValueKinds(t *testing.T) {
	for _, v := range []Value{Bool(true), Int(-3), String("s")} {
		_, isB := v.AsBool()
		_, isI := v.AsInt()
		_, isS := v.AsString()
		assert.Equal(t, 1, btoi(isB)+btoi(isI)+btoi(isS), v.String())
	}
	assert.Equal(t, KindInvalid, Value{}.Kind())
	assert.Equal(t, "<invalid>", Value{}.String())
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
