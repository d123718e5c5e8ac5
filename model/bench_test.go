package model

import (
	"testing"

	"github.com/xpwc/xpwc/spec"
)

// BenchmarkStep measures Step over every op of the alphabet from a mid-launch
// state (most ops disabled, a few enabled, as in exploration).
func BenchmarkStep(b *testing.B) {
	bounds := DefaultBounds()
	d := ref(b)
	ops, err := spec.ParseTrace(coldLaunch + "init proc=B program=P2\nlookup proc=B name=w0\n")
	if err != nil {
		b.Fatal(err)
	}
	outs, err := Replay(d, bounds, ops)
	if err != nil {
		b.Fatal(err)
	}
	s := outs[len(outs)-1].Next
	alphabet := Alphabet(bounds)
	var buf []Outcome
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for _, op := range alphabet {
			buf = StepAppend(buf[:0], d, bounds, &s, op)
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "steps/s")
}
