package runtime

import (
	"fmt"
	"slices"
)

// Preset names.
const (
	PresetSmall = "small"
	// PresetLlama1184 has the scale ExecuTorch PR 19988 measured for a llama
	// model: 1,184 packed weights totalling about 593 MB.
	PresetLlama1184 = "llama-1184"
)

// Presets lists the preset names Preset accepts.
func Presets() []string { return []string{PresetSmall, PresetLlama1184} }

// Preset returns the named synthetic program with weights derived from seed.
func Preset(name string, seed uint64) (*Program, error) {
	switch name {
	case PresetSmall:
		return NewSynthetic(name, seed, smallLayers())
	case PresetLlama1184:
		return NewSynthetic(name, seed, llamaLayers())
	}
	return nil, fmt.Errorf("%w: %q (have %v)", ErrUnknownPreset, name, Presets())
}

// smallLayers is a four-layer graph of about 77 KB packed (f32, nr 16) whose
// shapes are not multiples of the common panel widths, with one layer
// without bias and a branch (two layers read "embed").
func smallLayers() []Layer {
	return []Layer{
		{Name: "embed", N: 100, K: 64, Bias: true},
		{Name: "hidden", Input: "embed", N: 37, K: 100, Bias: true},
		{Name: "skip", Input: "embed", N: 64, K: 100},
		{Name: "head", Input: "hidden", N: 10, K: 37, Bias: true},
	}
}

// Shapes of the llama-1184 preset (see docs/runtime.md): 74 blocks of 16
// layers. Each block is two attention+MLP halves ("a.", "b.") and a
// low-rank adapter pair. With f32 nr-16 packing, round_up(N,16)·4·(K+1)
// bytes per layer, the total is 592,970,880 bytes.
const (
	llamaBlocks = 74
	llamaDim    = 256  // model width D
	llamaKV     = 128  // key/value width
	llamaFFN    = 1040 // MLP hidden width F
	llamaRank   = 8    // adapter rank R
)

func llamaLayers() []Layer {
	layers := make([]Layer, 0, llamaBlocks*16)
	prev := "" // the program input feeds block 0
	add := func(name, input string, n, k int) string {
		layers = append(layers, Layer{Name: name, Input: input, N: n, K: k, Bias: true})
		return name
	}
	for b := range llamaBlocks {
		for _, half := range []string{"a", "b"} {
			p := fmt.Sprintf("blk.%d.%s.", b, half)
			// q, k and v all read the block's running activation; o reads q
			// (standing in for attention), gate and up read o, down reads up.
			q := add(p+"attn_q", prev, llamaDim, llamaDim)
			add(p+"attn_k", prev, llamaKV, llamaDim)
			add(p+"attn_v", prev, llamaKV, llamaDim)
			o := add(p+"attn_o", q, llamaDim, llamaDim)
			add(p+"ffn_gate", o, llamaFFN, llamaDim)
			up := add(p+"ffn_up", o, llamaFFN, llamaDim)
			prev = add(p+"ffn_down", up, llamaDim, llamaFFN)
		}
		p := fmt.Sprintf("blk.%d.", b)
		a := add(p+"lora_a", prev, llamaRank, llamaDim)
		prev = add(p+"lora_b", a, llamaDim, llamaRank)
	}
	return slices.Clip(layers)
}
