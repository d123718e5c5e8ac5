package model

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The canonical form's hot helpers are written for speed; these tests hold
// each to the plain definition it replaces.

// randomEncoding fills an encoding with random field values: every field
// is one byte (booleans written back as 0 or 1).
func randomEncoding(r *rand.Rand, e *Encoding) {
	for i := range e {
		e[i] = byte(r.IntN(4))
		if r.IntN(4) == 0 {
			e[i] = byte(r.IntN(256)) // copy labels, among others
		}
	}
	s := e.Decode()
	s.Encode(e)
}

func TestLessIsBytesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var e, f Encoding
	for range 20000 {
		randomEncoding(r, &e)
		f = e
		// Equal up to a position, anywhere (the tail past the last whole
		// word included), then different there and random after it; or
		// equal.
		if i := r.IntN(EncodedSize + 1); i < EncodedSize {
			for j := i; j < EncodedSize; j++ {
				f[j] = byte(r.IntN(256))
			}
		}
		want := bytes.Compare(e[:], f[:]) < 0
		if got := e.less(&f); got != want {
			t.Fatalf("less(%x, %x) = %v, bytes.Compare says %v", e, f, got, want)
		}
		if got, want := f.less(&e), bytes.Compare(f[:], e[:]) < 0; got != want {
			t.Fatalf("less(%x, %x) = %v, bytes.Compare says %v", f, e, got, want)
		}
	}
}

// swapNamesOfState exchanges w0's and w1's records field by field.
func swapNamesOfState(s *State) {
	for q := range s.Procs {
		p := &s.Procs[q]
		p.Src[0], p.Src[1] = p.Src[1], p.Src[0]
		p.Ents[0], p.Ents[1] = p.Ents[1], p.Ents[0]
		p.Tomb[0], p.Tomb[1] = p.Tomb[1], p.Tomb[0]
	}
	s.Disk.Idx[0], s.Disk.Idx[1] = s.Disk.Idx[1], s.Disk.Idx[0]
	s.Env.Src[0], s.Env.Src[1] = s.Env.Src[1], s.Env.Src[0]
	s.Ghost[0], s.Ghost[1] = s.Ghost[1], s.Ghost[0]
}

func TestSwapNamesIsTheFieldSwap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var e, want Encoding
	for range 2000 {
		randomEncoding(r, &e)
		s := e.Decode()
		swapNamesOfState(&s)
		s.Encode(&want)
		e.swapNames()
		if e != want {
			t.Fatalf("swapNames gives %x, the field swap %x", e, want)
		}
	}
}

// canonicalEncodingUnderByDefinition is the least encoding of every
// renaming in g, the earlier renaming (identity, SwapNames, SwapProcs,
// both) on a tie: what CanonicalEncodingUnder computes, computed in full.
func canonicalEncodingUnderByDefinition(s *State, e *Encoding, g Renaming) Renaming {
	var x Encoding
	s.Encode(e)
	best := Renaming(0)
	var c0 Encoding
	s.Encode(&c0)
	for _, r := range [...]Renaming{SwapNames, SwapProcs, SwapProcs | SwapNames} {
		if r&^g != 0 {
			continue
		}
		c0.rename(&x, r)
		if bytes.Compare(x[:], e[:]) < 0 {
			*e, best = x, r
		}
	}
	return best
}

// The canonical form skips the renamings that cannot give the least
// encoding (firstProcOrder); it gives what computing every renaming
// gives, for every group, with the processes' first bytes often tied so
// that both sides are searched too.
func TestCanonicalEncodingUnderIsTheLeastRenaming(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var e, got, want Encoding
	for range 50000 {
		randomEncoding(r, &e)
		if r.IntN(2) == 0 {
			e[procSize], e[procSize+1] = e[0], e[1]
		}
		s := e.Decode()
		for g := range SwapProcs | SwapNames + 1 {
			rg := s.CanonicalEncodingUnder(&got, g)
			rw := canonicalEncodingUnderByDefinition(&s, &want, g)
			if got != want || rg != rw {
				t.Fatalf("group %d, state %x: %x by %d, want %x by %d", g, e, got, rg, want, rw)
			}
		}
		swapped := s.CanonicalEncoding(&got)
		rw := canonicalEncodingUnderByDefinition(&s, &want, SwapProcs)
		if got != want || swapped != (rw == SwapProcs) {
			t.Fatalf("state %x: %x swapped %v, want %x by %d", e, got, swapped, want, rw)
		}
	}
}

// BenchmarkCanonEncode measures the canonical form of the successors of a
// two-name exploration's states (both renamings in the group).
func BenchmarkCanonEncode(b *testing.B) {
	d := ref(b)
	bounds := ExhaustiveBounds()
	bounds.Names = 2
	canon := NewCanon(d, bounds, bounds.Symmetries(), false)
	// States along random walks.
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := Alphabet(bounds)
	var states []State
	s := Init(bounds)
	for len(states) < 4096 {
		outs := Step(d, bounds, s, alphabet[r.IntN(len(alphabet))])
		if len(outs) == 0 {
			continue
		}
		s = outs[r.IntN(len(outs))].Next
		states = append(states, s)
	}
	var e Encoding
	n := 0
	for b.Loop() {
		canon.Encode(&states[n%len(states)], &e)
		n++
	}
}
