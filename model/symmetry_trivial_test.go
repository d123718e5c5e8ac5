package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// With no renaming in the group (one process, names a program tells
// apart), a state's orbit is itself: CanonicalEncodingUnder writes its own
// encoding, whatever the buffer held.
func TestCanonicalEncodingUnderTheTrivialGroupIsTheEncoding(t *testing.T) {
	b := Bounds{Procs: 1, Names: 1, Programs: 1, Kernels: 1, Sources: 1}
	require.Zero(t, b.Symmetries())
	outs := run(t, ref(t), b, coldLaunch)
	var other Encoding
	outs[1].Next.Encode(&other)
	for _, o := range outs[2:] {
		var want Encoding
		o.Next.Encode(&want)
		e := other
		require.Zero(t, o.Next.CanonicalEncodingUnder(&e, 0))
		require.Equal(t, want, e, o.Op.String())
	}
}
