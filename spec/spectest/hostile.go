package spectest

import (
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/xpwc/xpwc/spec"
)

// HostileSize is the size of every Hostile file: 64 GiB, mostly holes.
const HostileSize = 64 << 30

// Hostile is a forged cache file as large as it claims: a sparse file whose
// footer, commit slot or index header declares counts and lengths that fit
// its size, so a check of declarations against the file size passes it, and
// only bounding work by what is decoded keeps its rejection cheap (G7).
type Hostile struct {
	Name string
	File *SparseFile
}

// HostileFiles returns the forged files the parsers, the cache and simrun
// are tested with.
func HostileFiles() []Hostile {
	const page = 4096
	v2Footer := func(indexStart uint64, count uint32) Part {
		f := spec.EncodeV2Index(indexStart, nil)
		le.PutUint32(f[8:], count)
		return Part{Off: HostileSize - spec.V2FooterSize, Data: f}
	}
	// Valid entries first, so a parser decodes them before it meets the
	// holes.
	var named []spec.Entry
	for i := range 1000 {
		named = append(named, spec.Entry{Key: spec.Key{Weight: "w" + strconv.Itoa(i)}})
	}
	v2Head := spec.EncodeV2Index(0, named)
	v2Head = v2Head[:len(v2Head)-spec.V2FooterSize]
	// The header page with slot 1 committing generation 1 to an index of
	// indexLen bytes at the first page.
	header := func(indexLen uint64) Part {
		h := spec.EncodeV3Header(page)
		copy(h[spec.V3SlotSize:], spec.EncodeCommitSlot(spec.Commit{
			Generation: 1, PageSize: page, IndexOff: page, IndexLen: indexLen, IndexCRC: 1,
		}))
		return Part{Off: 0, Data: h}
	}
	v3Index := func(count uint64, entries []spec.Entry) Part {
		entries = slices.Clone(entries)
		for i := range entries {
			entries[i].Offset = 62 << 30 // past the index; empty, so valid
		}
		b := spec.EncodeV3Index(entries)
		le.PutUint64(b[8:], count)
		return Part{Off: page, Data: b}
	}
	const v3Len = 60 << 30
	sparse := func(parts ...Part) *SparseFile { return &SparseFile{Size: HostileSize, Parts: parts} }
	return []Hostile{
		{"v2 footer count 2863311359 index_start 4096", sparse(v2Footer(page, 2_863_311_359))},
		{"v2 footer huge count, 1000 valid entries then holes", sparse(Part{Off: page, Data: v2Head}, v2Footer(page, 2_863_311_359))},
		{"v3 slot names a 60 GiB index of holes", sparse(header(v3Len))},
		{"v3 index header with a huge count", sparse(header(v3Len), v3Index(v3Len/spec.V3MinEntrySize-1, nil))},
		{"v3 huge count, 1000 valid entries then holes", sparse(header(v3Len), v3Index(v3Len/spec.V3MinEntrySize-1, named))},
	}
}

// Materialize writes s to path as a real sparse file: its size by truncate,
// its parts by positioned writes, nothing in the holes.
func (s *SparseFile) Materialize(path string) (err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if err := f.Truncate(s.Size); err != nil {
		return fmt.Errorf("spectest: sparse file of %d bytes: %w", s.Size, err)
	}
	for _, p := range s.Parts {
		if _, err := f.WriteAt(p.Data, p.Off); err != nil {
			return err
		}
	}
	return nil
}
