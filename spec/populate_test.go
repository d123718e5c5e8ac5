package spec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/internal/rawmem"
)

// handed records what a parse hands Parser.Populate.
type handed struct{ ranges [][2]uintptr }

func (h *handed) populate(addr uintptr, n int) {
	h.ranges = append(h.ranges, [2]uintptr{addr, addr + uintptr(n)})
}

// covers reports whether one handed range holds the n bytes at addr.
func (h *handed) covers(addr uintptr, n int) bool {
	for _, r := range h.ranges {
		if addr >= r[0] && addr+uintptr(n) <= r[1] {
			return true
		}
	}
	return false
}

func (h *handed) total() (n uintptr) {
	for _, r := range h.ranges {
		n += r[1] - r[0]
	}
	return n
}

// populateFiles are a v2 and a v3 file in memory of n one-page entries
// with names of nameLen bytes or so.
func populateFiles(n, nameLen int) map[string][]byte {
	const page = 4096
	es := make([]Entry, n)
	for i := range es {
		w := fmt.Sprintf("layers.%d.weight", i)
		es[i] = Entry{Key: Key{Weight: w + strings.Repeat("w", max(0, nameLen-len(w))), Seed: 7}, Offset: uint64(i+1) * page, Size: 1}
	}
	dataEnd := uint64(n+1) * page
	v2 := append(make([]byte, dataEnd), EncodeV2Index(dataEnd, es)...)
	idx := EncodeV3Index(es)
	v3 := append(make([]byte, dataEnd), idx...)
	copy(v3, EncodeV3Header(page))
	copy(v3[CommitSlotOffset(1):], EncodeCommitSlot(NewCommit(1, page, dataEnd, idx)))
	return map[string][]byte{"v2": v2, "v3": v3}
}

func parseAs(format string, p Parser, b []byte) ([]Entry, error) {
	if format == "v2" {
		v, err := p.ParseV2(Bytes(b), int64(len(b)))
		if err != nil {
			return nil, err
		}
		return v.Entries, nil
	}
	v, err := p.ParseV3(Bytes(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	return v.Entries, nil
}

// TestParserPopulateHandsWhatItFills: a parse from memory (names copied
// into its arena) hands Parser.Populate the memory of every Entry and
// every name it returns, in a few calls, each within one handed range.
// The v3 names are nameLen+1 bytes (weight and separator), so the
// lengths give entries of 3, 0, 7 and 6 bytes of padding: less than
// v3LikelyPadding's 3 bytes an entry, the last names are handed too.
func TestParserPopulateHandsWhatItFills(t *testing.T) {
	const n = 3*populateEntries + 100 // several steps of Entries
	for _, nameLen := range []int{40, 43, 44, 45} {
		for format, b := range populateFiles(n, nameLen) {
			var h handed
			entries, err := parseAs(format, Parser{Populate: h.populate}, b)
			require.NoError(t, err, format)
			require.Len(t, entries, n)
			for i := range entries {
				require.True(t, h.covers(rawmem.Region(entries[i:i+1])), "%s: entry %d not handed", format, i)
				name := rawmem.StringBytes(entries[i].Key.Weight)
				require.True(t, h.covers(rawmem.Region(name)), "%s, names of %d: name %d not handed", format, nameLen, i)
			}
			require.LessOrEqual(t, len(h.ranges), n/populateEntries+1+4, "%s: calls", format)
			// The same parse without Populate decodes the same entries.
			plain, err := parseAs(format, Parser{}, b)
			require.NoError(t, err)
			require.Equal(t, plain, entries, format)
		}
	}
}

// TestParserPopulateSparesV3Padding: a v3 name arena is sized for the
// index's bytes less the entries' fixed fields, padding included. What
// Populate is handed of it ends where names of at least the likely
// padding end, not a padding's worth (here 3 bytes an entry) further.
func TestParserPopulateSparesV3Padding(t *testing.T) {
	const n = 1000
	b := populateFiles(n, 40)["v3"] // 41-byte names: 3 bytes of padding each
	var h handed
	entries, err := parseAs("v3", Parser{Populate: h.populate}, b)
	require.NoError(t, err)
	first, _ := rawmem.Region(rawmem.StringBytes(entries[0].Key.Weight))
	lastAt, lastLen := rawmem.Region(rawmem.StringBytes(entries[n-1].Key.Weight))
	namesEnd := lastAt + uintptr(lastLen) + 1 // the separator
	for _, r := range h.ranges {
		if r[0] <= first && first < r[1] {
			require.LessOrEqual(t, r[1], namesEnd, "names end %d bytes into the arena, handed to %d", namesEnd-first, r[1]-first)
			return
		}
	}
	t.Fatal("the names were not handed")
}

// TestParserPopulateBoundedByWhatItDecodes (G7): an index whose count is
// forged up to what its length allows gets Entries sized for that count,
// but Populate is handed at most a step past what the parse decoded
// before it found the count wrong, not the whole allocation.
func TestParserPopulateBoundedByWhatItDecodes(t *testing.T) {
	const n, nameLen = 8, 4600 // long names: a short index that fits a large count
	b := populateFiles(n, nameLen)["v2"]
	foot := len(b) - V2FooterSize
	f := DecodeV2Footer([V2FooterSize]byte(b[foot:]))
	forged := uint32((uint64(foot) - f.IndexStart) / V2EntryFixedSize)
	require.Greater(t, forged, uint32(2*populateEntries), "the forged count must be worth several steps")
	copy(b[foot:], appendV2Footer(nil, f.IndexStart, forged, V2Version))
	var h handed
	_, err := parseAs("v2", Parser{Populate: h.populate}, b)
	require.ErrorIs(t, err, ErrCountMismatch)
	_, entryBytes := rawmem.Region(make([]Entry, 1))
	// A step of Entries, and the names decoded: each long name got a
	// buffer of its own length, since the forged count leaves no room
	// for more name bytes.
	bound := uintptr(populateEntries*entryBytes + n*(nameLen+8))
	require.LessOrEqual(t, h.total(), bound, "handed %d bytes for %d decoded entries (forged count %d)", h.total(), n, forged)
	require.NotZero(t, h.total())
}
