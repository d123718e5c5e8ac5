package runtime

import (
	"encoding/binary"
	"hash/fnv"
)

// GeneratorVersion is part of every synthetic source digest: change it when
// the bytes fillUniform produces for a given seed change, so that caches
// written with the old generator miss instead of serving stale packs (G1).
const GeneratorVersion = 1

// synthetic produces weights from a program seed. Nothing is stored: weights
// are generated on demand into the caller's buffers, which is why a warm
// launch that hits every entry never generates a byte.
type synthetic struct {
	seed    uint64
	layers  []Layer
	digests []uint64
}

func newSynthetic(seed uint64, layers []Layer) *synthetic {
	s := &synthetic{seed: seed, layers: layers, digests: make([]uint64, len(layers))}
	for i, l := range layers {
		h := fnv.New64a()
		var b [8 * 5]byte
		binary.LittleEndian.PutUint64(b[0:], GeneratorVersion)
		binary.LittleEndian.PutUint64(b[8:], seed)
		binary.LittleEndian.PutUint64(b[16:], uint64(l.N))
		binary.LittleEndian.PutUint64(b[24:], uint64(l.K))
		if l.Bias {
			b[32] = 1
		}
		h.Write(b[:])
		h.Write([]byte(l.Name))
		s.digests[i] = h.Sum64()
	}
	return s
}

func (s *synthetic) digest(i int) uint64 { return s.digests[i] }

// fill derives the weights from the digest itself, so the bytes are a pure
// function of the digest: equal digests mean equal bytes by construction.
func (s *synthetic) fill(i int, w, b []float32) {
	l := s.layers[i]
	fillUniform(w, s.digests[i], weightScale(l.K))
	if l.Bias {
		fillUniform(b[:l.N], s.digests[i]^0x9e3779b97f4a7c15, 0.1)
	}
}

// NewSynthetic returns a program whose weights are generated from seed.
func NewSynthetic(name string, seed uint64, layers []Layer) (*Program, error) {
	p, err := newProgram(name, layers, nil)
	if err != nil {
		return nil, err
	}
	p.src = newSynthetic(seed, p.layers)
	return p, nil
}

// fillUniform fills x with uniform values in [-scale, scale) from a
// splitmix64 stream: two floats per 64-bit draw, about 1 ns per pair, so the
// 148 M weights of the llama-1184 preset take a fraction of a second.
func fillUniform(x []float32, seed uint64, scale float32) {
	state := seed
	f := scale / (1 << 31)
	i := 0
	for ; i+1 < len(x); i += 2 {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		x[i] = float32(int32(uint32(z))) * f
		x[i+1] = float32(int32(uint32(z>>32))) * f
	}
	if i < len(x) {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		x[i] = float32(int32(uint32(z))) * f
	}
}
