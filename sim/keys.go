package sim

import (
	"bytes"
	"fmt"

	"github.com/xpwc/xpwc/faultinject/crashpoint"
	"github.com/xpwc/xpwc/spec"
)

// The concrete side of the abstract vocabulary. Name wN is the layer
// (wN.weight, wN.bias); kernel version v is layout seed 100+v; source
// version v of wN is the source digest 1000·(N+1)+v. Packed bytes are
// crashpoint.Pack of the key, a function of every key field, so a hit's
// bytes tell which kernel and source packed them, or that they were changed
// after packing (G1).

const fingerprint = 0x5eed

func weightName(n int) string { return fmt.Sprintf("w%d.weight", n) }

func key(n int, kernel, source uint8) spec.Key {
	return spec.Key{
		Weight:      weightName(n),
		Bias:        fmt.Sprintf("w%d.bias", n),
		Seed:        100 + uint32(kernel),
		Fingerprint: fingerprint,
		Source:      uint64(1000*(n+1)) + uint64(source),
	}
}

// versions inverts key for a stored key: ok is false for a key the harness
// never makes.
func versions(k spec.Key) (n int, kernel, source uint8, ok bool) {
	for n = 0; n < spec.MaxNames; n++ {
		if k.Weight != weightName(n) {
			continue
		}
		kv, sv := int64(k.Seed)-100, int64(k.Source)-int64(1000*(n+1))
		if kv < 0 || kv > 1 || sv < 0 || sv > 1 || k.Fingerprint != fingerprint {
			return n, 0, 0, false
		}
		return n, uint8(kv), uint8(sv), true
	}
	return 0, 0, 0, false
}

// classify names the packing that b holds for name n. want is the packing
// the process asked for: when b matches no packing at all it is reported
// as want with Intact false (the key matched, the bytes did not).
func classify(b []byte, n int, want spec.Packing) spec.Packing {
	for kv := uint8(0); kv < 2; kv++ {
		for sv := uint8(0); sv < 2; sv++ {
			if bytes.Equal(b, crashpoint.Pack(key(n, kv, sv))) {
				return spec.Packing{Kernel: kv, Source: sv, Intact: true}
			}
		}
	}
	return spec.Packing{Kernel: want.Kernel, Source: want.Source}
}

// nameIndex maps an entry name as Cache.Names prints it (and v2 stores
// it: the weight and bias names concatenated), or its weight's name alone,
// back to N of wN, -1 for a name the harness never makes.
func nameIndex(s string) int {
	for n := 0; n < spec.MaxNames; n++ {
		if k := key(n, 0, 0); s == k.V2Name() || s == k.Weight {
			return n
		}
	}
	return -1
}

// nameOf maps an entry name as Cache.Names prints it back to wN.
func nameOf(s string) string {
	if n := nameIndex(s); n >= 0 {
		return spec.Name(n).String()
	}
	return fmt.Sprintf("%q", s)
}
