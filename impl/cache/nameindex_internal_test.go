package cache

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

func TestConcatEqual(t *testing.T) {
	for _, c := range []struct {
		a1, a2, b1, b2 string
		want           bool
	}{
		{"ab", "c", "a", "bc", true},
		{"a", "bc", "ab", "c", true},
		{"abc", "", "", "abc", true},
		{"ab", "c", "ab", "c", true},
		{"ab", "c", "ab", "d", false},
		{"ab", "c", "a", "bd", false},
		{"ab", "c", "x", "bc", false},
		{"ab", "c", "ab", "", false},
		{"", "", "", "", true},
		// One side the whole name (a v2 file's entry, bias empty).
		{"abc", "", "ab", "c", true},
		{"ab", "c", "abc", "", true},
		{"abd", "", "ab", "c", false},
		{"xbc", "", "ab", "c", false},
		{"ab", "c", "", "abc", true},
	} {
		require.Equal(t, c.want, concatEqual(c.a1, c.a2, c.b1, c.b2), "%q+%q vs %q+%q", c.a1, c.a2, c.b1, c.b2)
	}
}

// TestConcatHashIgnoresTheSplit: in v2 mode a name hashes the same
// however it is split between weight and bias, at every length the hash
// treats apart (one part empty, the short stack buffer, the long one,
// longer than both), so a v2 file's entry (bias empty) is found by a
// look-up's key (both parts).
func TestConcatHashIgnoresTheSplit(t *testing.T) {
	var idx nameIndex
	idx.init(true)
	for _, n := range []int{0, 1, 38, 63, 64, 65, 200, 256, 257, 300} {
		var sb strings.Builder
		for i := range n {
			sb.WriteByte(byte('a' + i*7%26))
		}
		s := sb.String()
		want := idx.concatHash(s, "")
		for i := 0; i <= n; i++ {
			require.Equal(t, want, idx.concatHash(s[:i], s[i:]), "length %d split at %d", n, i)
		}
	}
}

// TestNameIndexMatchesMap runs random puts, removals and look-ups on a
// nameIndex and on a Go map keyed as Cache.name keys (the map the index
// replaced), in both namings, and compares them after every step: look-ups
// of every name, the length, and what all yields (each entry once). Names
// come from a few letters so that v2's concatenations collide ("ab"+"c",
// "a"+"bc") and removals leave runs of removed slots that probes must
// pass. A long letter makes names past the stack buffer v2's hash builds
// concatenations in. Remembering the entry found last without forgetting
// it at its removal or replacement failed it.
func TestNameIndexMatchesMap(t *testing.T) {
	long := strings.Repeat("l", 200)
	letters := []string{"", "a", "b", "ab", "ba", "abc", long, long + "a", "a" + long}
	for _, v2 := range []bool{false, true} {
		name := func(k spec.Key) entryName {
			if v2 {
				return entryName{w: k.Weight + k.Bias}
			}
			return entryName{k.Weight, k.Bias}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		var idx nameIndex
		idx.init(v2)
		ref := map[entryName]*entry{}
		var keys []spec.Key
		for _, w := range letters[1:] {
			for _, b := range letters {
				for i := range 3 {
					keys = append(keys, spec.Key{Weight: w + string(rune('0'+i)), Bias: b})
					keys = append(keys, spec.Key{Weight: w, Bias: b + string(rune('0'+i))})
				}
			}
		}
		for step := range 20000 {
			k := keys[rng.IntN(len(keys))]
			// A look-up of the name before and after each change, as
			// XNNPACK's look-up then insert: the entry get remembers must
			// not outlive its removal or replacement.
			require.Same(t, ref[name(k)], idx.get(k.Weight, k.Bias), "v2=%v step %d before", v2, step)
			switch rng.IntN(3) {
			case 0, 1:
				e := &entry{rec: &spec.Entry{Key: k}}
				idx.put(e)
				ref[name(k)] = e
			case 2:
				if e := ref[name(k)]; e != nil {
					idx.remove(e)
					delete(ref, name(k))
				} else {
					// Removing an entry that is not the current one of its
					// name changes nothing.
					idx.remove(&entry{rec: &spec.Entry{Key: k}})
				}
			}
			require.Same(t, ref[name(k)], idx.get(k.Weight, k.Bias), "v2=%v step %d after", v2, step)
			require.Equal(t, len(ref), idx.len(), "v2=%v step %d", v2, step)
			if step%97 != 0 {
				continue
			}
			for _, k := range keys {
				require.Same(t, ref[name(k)], idx.get(k.Weight, k.Bias), "v2=%v step %d %q+%q", v2, step, k.Weight, k.Bias)
			}
			seen := map[*entry]bool{}
			for e := range idx.all() {
				require.False(t, seen[e])
				seen[e] = true
				require.Same(t, ref[name(*e.key())], e)
			}
			require.Len(t, seen, len(ref))
		}
		// Removing while iterating: every entry is yielded once, none
		// after its removal.
		removed := map[*entry]bool{}
		for e := range idx.all() {
			require.False(t, removed[e])
			for _, k := range keys[:5] {
				if o := idx.get(k.Weight, k.Bias); o != nil && o != e {
					idx.remove(o)
					removed[o] = true
				}
			}
		}
	}
}

// TestMatchesEveryFieldTheIndexDoesNot holds matches to every field of a
// key but the two names, which the index compares before it (find): a
// key that differs from the stored one in any other field, one field at a
// time, is not served. A field added to spec.Key fails here until matches
// compares it.
func TestMatchesEveryFieldTheIndexDoesNot(t *testing.T) {
	stored := spec.Key{Weight: "w", Bias: "b", Seed: 1, Fingerprint: 2, Source: 3}
	c := &Cache{}
	e := &entry{rec: &spec.Entry{Key: stored}}
	require.True(t, c.matches(e, stored))
	kt := reflect.TypeFor[spec.Key]()
	for i := range kt.NumField() {
		f := kt.Field(i)
		k := stored
		v := reflect.ValueOf(&k).Elem().Field(i)
		switch f.Type.Kind() {
		case reflect.String:
			require.Contains(t, []string{"Weight", "Bias"}, f.Name, "a string field the index does not compare")
			continue
		case reflect.Uint32, reflect.Uint64:
			v.SetUint(v.Uint() + 1)
		default:
			t.Fatalf("field %s of a kind matches does not know", f.Name)
		}
		require.False(t, c.matches(e, k), "a key differing only in %s", f.Name)
	}
}

// TestV3NameHashSpreads: in v3 mode the index hashes the weight and the
// bias names, and tells a name's split: keys sharing their weight name
// (or their bias name), and every split of one string between weight
// and bias, hash apart, as the llama-1184 preset's keys do. A hash that
// dropped either part, or hashed the two as one string, would put such
// keys in one probe run (found still, each after a linear scan).
func TestV3NameHashSpreads(t *testing.T) {
	var idx nameIndex
	idx.init(false)
	seen := map[uint64]spec.Key{}
	add := func(k spec.Key) {
		h, _ := idx.hash(k.Weight, k.Bias)
		if o, dup := seen[h]; dup {
			t.Fatalf("%q+%q and %q+%q hash alike", o.Weight, o.Bias, k.Weight, k.Bias)
		}
		seen[h] = k
	}
	long := strings.Repeat("blk.17.ffn_gate.weight", 3)
	for i := 0; i <= len(long); i++ {
		add(spec.Key{Weight: long[:i], Bias: long[i:]})
	}
	for i := range 1000 {
		n := strconv.Itoa(i)
		add(spec.Key{Weight: "output.weight", Bias: "b" + n})
		add(spec.Key{Weight: "w" + n, Bias: "output.bias"})
	}
	// Names in the manner of the llama-1184 preset's.
	for blk := range 74 {
		for _, half := range []string{"a", "b"} {
			for _, op := range []string{"attn_q", "attn_k", "attn_v", "attn_o", "ffn_gate", "ffn_up", "ffn_down"} {
				n := fmt.Sprintf("blk.%d.%s.%s", blk, half, op)
				add(spec.Key{Weight: n + ".weight", Bias: n + ".bias"})
			}
		}
	}
}

// TestNameIndexLastIsTheSameKey: the entry found last is returned again
// only for the same key strings. A look-up right after it of another name
// of the same lengths finds its own entry, and the same name in other
// memory finds the same entry, in both modes.
func TestNameIndexLastIsTheSameKey(t *testing.T) {
	for _, concat := range []bool{false, true} {
		var idx nameIndex
		idx.init(concat)
		buf := []byte("blk.0.a.attn_q.weightblk.0.a.attn_k.weightbias")
		w1, w2, b := string(buf[:21]), string(buf[21:42]), string(buf[42:])
		e1 := &entry{rec: &spec.Entry{Key: spec.Key{Weight: w1, Bias: b}}}
		e2 := &entry{rec: &spec.Entry{Key: spec.Key{Weight: w2, Bias: b}}}
		idx.put(e1)
		idx.put(e2)
		require.Same(t, e1, idx.get(w1, b), "concat %v", concat)
		require.Same(t, e2, idx.get(w2, b), "concat %v: the next name, after the first", concat)
		require.Same(t, e2, idx.get(w2, b), "concat %v: again", concat)
		w1copy := strings.Clone(w1)
		require.Same(t, e1, idx.get(w1copy, b), "concat %v: the first name in other memory", concat)
		require.Nil(t, idx.get(w1, b+"x"), "concat %v", concat)
		// A prefix of the last key's memory is another key, and so is an
		// empty bias after a non-empty one: the same address is not enough.
		mem := "blk.0.a.attn_q.weight"
		long, short := &entry{rec: &spec.Entry{Key: spec.Key{Weight: mem, Bias: "x"}}}, &entry{rec: &spec.Entry{Key: spec.Key{Weight: mem[:5]}}}
		idx.put(long)
		idx.put(short)
		require.Same(t, long, idx.get(mem, "x"), "concat %v", concat)
		require.Same(t, short, idx.get(mem[:5], ""), "concat %v: a prefix after the whole", concat)
	}
}
