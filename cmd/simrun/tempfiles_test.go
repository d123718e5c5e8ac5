package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The explorer's temporary files work as files and leave nothing in the
// directory, even before they are closed.
func TestOSTempLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := osTemp{dir}.Create()
	require.NoError(t, err)
	_, err = f.Write([]byte("abc"))
	require.NoError(t, err)
	b := make([]byte, 2)
	_, err = f.ReadAt(b, 1)
	require.NoError(t, err)
	assert.Equal(t, "bc", string(b))
	left, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	assert.Empty(t, left)
	require.NoError(t, f.Close())

	_, err = osTemp{filepath.Join(dir, "missing")}.Create()
	assert.ErrorIs(t, err, os.ErrNotExist)
}
