package spec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The v3 decoder's fast checks (hasNUL, zeroTail, v3RangeOK) only decide whether
// the exact checks behind them run: these tests hold that their answers are
// the exact checks' answers.

func TestHasNULMatchesByteScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{0, 1, 0x7f, 0x80, 0x81, 0xfe, 0xff, 'a', '.'}
	for range 200_000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[1+rng.IntN(len(alphabet)-1)]
			if rng.IntN(25) == 0 {
				b[i] = 0
			}
		}
		if got, want := hasNUL(b), bytes.IndexByte(b, 0) >= 0; got != want {
			t.Fatalf("hasNUL(%x) = %v, want %v", b, got, want)
		}
	}
}

func TestZeroTailMatchesByteScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100_000 {
		b := make([]byte, 1+rng.IntN(20))
		for i := range b {
			if rng.IntN(3) == 0 {
				b[i] = byte(1 + rng.IntN(255))
			}
		}
		n := rng.IntN(min(len(b), 7) + 1)
		want := bytes.Count(b[len(b)-n:], []byte{0}) == n
		if got := zeroTail(b, n); got != want {
			t.Fatalf("zeroTail(%x, %d) = %v, want %v", b, n, got, want)
		}
	}
}

func TestV3RangeOKMatchesCheckV3Range(t *testing.T) {
	const page = 4096
	bd := v3Bounds{size: 64 * page, header: page, page: page, indexOff: 40 * page, indexLen: 100}
	vals := []uint64{0, 1, page - 1, page, page + 1, 39 * page, 40 * page, 41 * page, 63 * page, 64 * page, 65 * page, 1 << 63, ^uint64(0) &^ (page - 1)}
	sizes := []uint64{0, 1, 100, page, 23 * page, 24 * page, 25 * page, 64 * page, 1 << 63, ^uint64(0)}
	passed := 0
	for _, off := range vals {
		for _, size := range sizes {
			e := &Entry{Offset: off, Size: size}
			ok := v3RangeOK(e, &bd)
			if err := checkV3Range(e, bd, 0); ok != (err == nil) {
				t.Fatalf("offset %d size %d: v3RangeOK %v, checkV3Range %v", off, size, ok, err)
			}
			if ok {
				passed++
			}
		}
	}
	if passed == 0 {
		t.Fatal("no range passed: the table tests nothing")
	}
}

func TestAllZeroMatchesByteScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 100_000 {
		b := make([]byte, rng.IntN(40))
		if len(b) > 0 && rng.IntN(2) == 0 {
			b[rng.IntN(len(b))] = byte(1 + rng.IntN(255))
		}
		if got, want := allZero(b), bytes.Count(b, []byte{0}) == len(b); got != want {
			t.Fatalf("allZero(%x) = %v, want %v", b, got, want)
		}
	}
}
