package errorfs

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDSLRoundTrip(t *testing.T) {
	for _, s := range []string{
		"enospc", "eio", "eintr", "enomem", "erofs", "eacces", "notexist", "wouldblock", "none",
		"(short 100 enospc)", "lie", "(if (ops sync syncdata syncdir msync) lie)",
		"(onIndex 3 (ops write allocate) enospc)",
		"(onIndex 0 eio)",
		"(randomly 0.1 42 eio)",
		"(randomCalls 0.05 3 writes (short 10 enospc))",
		"(if (randomCalls 0.5 9) eio)",
		"(randomly 0.25 7 (and writes (path \"*.tmp\")) (short 17 eio))",
		"(if (or reads (not (ops sync))) eintr)",
		"(if (and (onIndex 2) (randomly 0.5 1)) enomem)",
		"(any (if (ops lock) wouldblock) (if (ops create) erofs))",
		"(counter (toggle (if (path \"/c/*\") notexist)))",
	} {
		inj, err := Parse(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, inj.String())
	}
	for _, s := range []string{
		"(ops write)", "(if reads)", "(onIndex x eio)", "(randomly 2 1 eio)", "(short -1 eio)",
		"(short 1 (if reads eio))", "(path *.tmp)", "enospc eio", "(", ")", "()", "(if reads eio",
		"\"x", "(if (ops frob) eio)", "(counter)", "func",
	} {
		_, err := Parse(s)
		assert.ErrorIs(t, err, ErrSyntax, s)
	}
}

func TestDSLBehaviour(t *testing.T) {
	inj, err := Parse("(onIndex 1 (ops write allocate) enospc)")
	require.NoError(t, err)
	assert.NoError(t, inj.MaybeError(Op{Kind: OpWriteAt}))
	assert.NoError(t, inj.MaybeError(Op{Kind: OpSync}))
	assert.ErrorIs(t, inj.MaybeError(Op{Kind: OpAllocate}), syscall.ENOSPC)
	assert.NoError(t, inj.MaybeError(Op{Kind: OpAllocate}))

	p, err := ParsePredicate("(and writes (path \"*.tmp\"))")
	require.NoError(t, err)
	assert.True(t, p.Evaluate(Op{Kind: OpWriteAt, Path: "/c/x.tmp"}))
	assert.False(t, p.Evaluate(Op{Kind: OpReadAt, Path: "/c/x.tmp"}))
}
