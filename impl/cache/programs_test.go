package cache_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// Deleting the program being initialized ends its initialization (the
// backend destroyed it before Finalize, as a failed model load does): the
// next program can start, and Finalize has no program to end. Deleting
// another program leaves the active one initialized.
func TestDeleteProgramEndsOnlyItsOwnInitialization(t *testing.T) {
	c := open(t, cache.Options{Path: tempPath(t)})
	require.Equal(t, 0, launch(t, c, "done", keys(1, 1)))

	require.NoError(t, c.InitializeForProgram("P"))
	pack(t, c, key("p", 1))
	require.NoError(t, c.DeleteProgram("done"))
	require.ErrorIs(t, c.InitializeForProgram("Q"), cache.ErrProgramActive, "deleting another program ended P's initialization")
	require.NoError(t, c.Finalize(), "P is still initialized")

	require.NoError(t, c.InitializeForProgram("P2"))
	pack(t, c, key("p2", 1))
	require.NoError(t, c.DeleteProgram("P2"))
	require.ErrorIs(t, c.Finalize(), cache.ErrNoProgram, "P2 was deleted before Finalize")
	require.NoError(t, c.InitializeForProgram("Q"), "a deleted program does not block the next one")
	require.NoError(t, c.Finalize())
}

// ProgramNames lists, sorted, the entries one program references, whether
// it packed them or found them; a deleted program references nothing. Its
// handles are valid (issued) and the zero Handle is not.
func TestProgramNames(t *testing.T) {
	c := open(t, cache.Options{Path: tempPath(t)})
	ks := keys(3, 1)
	launch(t, c, "P", []spec.Key{ks[2], ks[0]})
	require.NoError(t, c.InitializeForProgram("Q"))
	h, hit := pack(t, c, ks[1])
	require.False(t, hit)
	require.True(t, h.Valid())
	require.False(t, cache.Handle{}.Valid())
	_, hit = pack(t, c, ks[2])
	require.True(t, hit)
	require.NoError(t, c.Finalize())

	require.Equal(t, []string{"w0w0_b", "w2w2_b"}, c.ProgramNames("P"))
	require.Equal(t, []string{"w1w1_b", "w2w2_b"}, c.ProgramNames("Q"))
	require.NoError(t, c.DeleteProgram("P"))
	require.Empty(t, c.ProgramNames("P"))
	require.Equal(t, []string{"w1w1_b", "w2w2_b"}, c.ProgramNames("Q"))
	require.Empty(t, c.ProgramNames("never"))
}
