package cache

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/vfs"
)

// walkMapping is a mapping of n bytes that records its Populate calls and
// refuses a call outside its bytes, an empty one, or more calls than the
// walk needs, so a walk that runs away ends with an error instead of
// spinning.
type walkMapping struct {
	vfs.Mapping
	n, max int
	calls  [][2]int
	mem    []byte
}

func (m *walkMapping) Bytes() []byte { return m.mem }

func (m *walkMapping) Populate(off, length int) error {
	m.calls = append(m.calls, [2]int{off, length})
	switch {
	case len(m.calls) > m.max:
		return errors.New("more populate calls than chunks")
	case length <= 0 || off < 0 || off+length > m.n:
		return fmt.Errorf("populate [%d, +%d) of a %d-byte mapping", off, length, m.n)
	}
	return nil
}

// The prefault walk populates a mapping's bytes in chunks from its end back
// to offset 0, each chunk starting at a multiple of prefaultChunk, once
// each, loads from every page of each chunk (the mapping's bytes hold a 1
// at each page's start, so the loads sum to the page count), and stops
// there; nothing is started for an empty span or a mapping that cannot be
// populated.
func TestPrefaultWalk(t *testing.T) {
	n := 2*prefaultChunk + 100
	m := &walkMapping{n: n, max: 3, mem: make([]byte, n)}
	for i := 0; i < n; i += touchStride {
		m.mem[i] = 1
	}
	p := startPrefault(m, n)
	require.NotNil(t, p)
	p.wg.Wait()
	require.NoError(t, p.err)
	require.Equal(t, [][2]int{{2 * prefaultChunk, 100}, {prefaultChunk, prefaultChunk}, {0, prefaultChunk}}, m.calls)
	require.Equal(t, 3, p.chunks)
	require.Equal(t, uint64((n+touchStride-1)/touchStride), p.sum, "pages loaded")

	require.Nil(t, startPrefault(&walkMapping{n: n}, 0))
	require.Nil(t, startPrefault(struct{ vfs.Mapping }{}, n), "not a Populater")
}
