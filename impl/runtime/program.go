// Package runtime is the small inference runtime around the packed-weight
// cache: a Program of fully-connected layers, a Backend that packs or looks
// up every weight through the cache the way XNNPACK's operator creation does
// and runs inference from the packed bytes, a Module that owns a deep copy
// of its backend options (ExecuTorch PR 19673), and Launch, which performs
// one process launch against a cache path and reports what happened.
package runtime

import (
	"fmt"
	"math"

	"github.com/xpwc/xpwc/internal/rawmem"
	"github.com/xpwc/xpwc/spec"
)

// MaxLayerElems bounds N×K of one layer, so that a program file cannot ask
// for an allocation beyond what a real model layer needs (256 Mi floats).
const MaxLayerElems = 1 << 28

// Layer is one fully-connected layer: y = x·Wᵀ + b with W of N×K and b of N.
type Layer struct {
	// Name names the layer; its tensors are Name+".weight" and Name+".bias".
	Name string
	// Input names the layer whose output feeds this one; empty means the
	// program's input.
	Input string
	// N is the number of outputs, K the number of inputs.
	N, K int
	// Bias tells whether the layer has a bias tensor.
	Bias bool
}

// WeightName and BiasName are the tensor names the cache key is built from;
// BiasName is empty for a layer without bias.
func (l Layer) WeightName() string { return l.Name + ".weight" }
func (l Layer) BiasName() string {
	if !l.Bias {
		return ""
	}
	return l.Name + ".bias"
}

// source produces a layer's unpacked weights and the digest that identifies
// them in the cache key (spec.Key.Source).
type source interface {
	// digest must change whenever the bytes fill writes change (G1).
	digest(i int) uint64
	// fill writes layer i's weights into w (N×K, row-major) and b (N).
	fill(i int, w, b []float32)
}

// Program is a graph of FC layers evaluated in order. The output of the
// program is the output of its last layer. A Program is immutable and safe
// for concurrent use.
type Program struct {
	name     string
	layers   []Layer
	inputDim int
	src      source
	// tensors holds each layer's weight and bias names, made once with the
	// program as a model file stores them, so that building a cache key
	// at every launch's look-ups allocates nothing.
	tensors []tensorNames
}

type tensorNames struct{ weight, bias string }

func newProgram(name string, layers []Layer, src source) (*Program, error) {
	p := &Program{name: name, layers: append([]Layer(nil), layers...), src: src}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.tensors = make([]tensorNames, len(p.layers))
	for i, l := range p.layers {
		p.tensors[i] = tensorNames{l.WeightName(), l.BiasName()}
	}
	return p, nil
}

func (p *Program) validate() error {
	if p.name == "" || !spec.ValidTensorName(p.name) {
		return &ProgramError{Field: "program name", Msg: fmt.Sprintf("invalid %q", p.name)}
	}
	if len(p.layers) == 0 {
		return &ProgramError{Field: "layers", Msg: "none"}
	}
	out := make(map[string]int, len(p.layers))
	for _, l := range p.layers {
		bad := func(field, format string, args ...any) error {
			return &ProgramError{Layer: l.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case l.Name == "" || !spec.ValidTensorName(l.WeightName()):
			return bad("name", "invalid")
		case l.N <= 0 || l.K <= 0:
			return bad("shape", "%d×%d is not positive", l.N, l.K)
		case int64(l.N)*int64(l.K) > MaxLayerElems:
			return bad("shape", "%d×%d exceeds %d elements", l.N, l.K, MaxLayerElems)
		}
		if _, dup := out[l.Name]; dup {
			return bad("name", "duplicate")
		}
		if l.Input == "" {
			if p.inputDim == 0 {
				p.inputDim = l.K
			} else if l.K != p.inputDim {
				return bad("K", "%d, but the program input has width %d", l.K, p.inputDim)
			}
		} else {
			n, ok := out[l.Input]
			if !ok {
				return bad("input", "%q is not an earlier layer", l.Input)
			}
			if n != l.K {
				return bad("K", "%d, but input %q has %d outputs", l.K, l.Input, n)
			}
		}
		out[l.Name] = l.N
	}
	if p.inputDim == 0 {
		return &ProgramError{Field: "input", Msg: "no layer reads the program input"}
	}
	return nil
}

// Name identifies the program to the cache (InitializeForProgram,
// DeleteProgram).
func (p *Program) Name() string { return p.name }

// Layers returns a copy of the layers in evaluation order.
func (p *Program) Layers() []Layer { return append([]Layer(nil), p.layers...) }

// NumLayers is len(Layers()).
func (p *Program) NumLayers() int { return len(p.layers) }

// Layer returns layer i.
func (p *Program) Layer(i int) Layer { return p.layers[i] }

// InputDim is the width of one input row; OutputDim that of one output row.
func (p *Program) InputDim() int  { return p.inputDim }
func (p *Program) OutputDim() int { return p.layers[len(p.layers)-1].N }

// SourceDigest is the spec.Key.Source of layer i: it changes whenever the
// layer's weight or bias bytes change (G1). For synthetic programs it is
// derived from (generator version, program seed, layer name, shape, bias) and
// costs nothing; for a program read from a file it is a 64-bit checksum of
// the layer's bytes computed once when the file is read (see docs/runtime.md).
func (p *Program) SourceDigest(i int) uint64 { return p.src.digest(i) }

// Weights writes layer i's unpacked weights into w (N×K, row-major, output
// channel major as XNNPACK's "goi" input) and b (N; ignored when the layer
// has no bias). It allocates nothing.
func (p *Program) Weights(i int, w, b []float32) {
	p.src.fill(i, w[:p.layers[i].N*p.layers[i].K], b)
}

// Input returns m deterministic input rows for the program, derived from
// seed, so that launches in different processes run the same inference.
func (p *Program) Input(m int, seed uint64) []float32 {
	x := make([]float32, m*p.inputDim)
	fillUniform(x, seed^0x1b873593, 1)
	return x
}

// TotalWeights is the number of unpacked weight and bias elements.
func (p *Program) TotalWeights() int64 {
	var n int64
	for _, l := range p.layers {
		n += int64(l.N) * int64(l.K)
		if l.Bias {
			n += int64(l.N)
		}
	}
	return n
}

// weightScale keeps activations of order one through a long chain of layers:
// uniform(-a, a) has variance a²/3, so a = sqrt(3/K) gives each output the
// variance of one input element.
func weightScale(k int) float32 { return float32(math.Sqrt(3 / float64(k))) }

// NewProgram returns a program of the caller's layers and weights:
// weights[i] is layer i's N×K weight matrix (row-major, output by output),
// biases[i] its N biases (nil for a layer without bias; biases itself may
// be nil when no layer has one). The program keeps copies. Each layer's
// key Source is the digest of its weight and bias bytes
// (spec.SourceDigest), so a changed weight misses in the cache instead of
// serving the packing of the old one (G1).
func NewProgram(name string, layers []Layer, weights, biases [][]float32) (*Program, error) {
	if len(weights) != len(layers) || biases != nil && len(biases) != len(layers) {
		return nil, &ProgramError{Field: "weights", Msg: fmt.Sprintf("%d weight and %d bias slices for %d layers", len(weights), len(biases), len(layers))}
	}
	src := &fileSource{w: make([][]float32, len(layers)), b: make([][]float32, len(layers)), digests: make([]uint64, len(layers))}
	for i, l := range layers {
		var b []float32
		if biases != nil {
			b = biases[i]
		}
		switch {
		case len(weights[i]) != l.N*l.K:
			return nil, &ProgramError{Layer: l.Name, Field: "weights", Msg: fmt.Sprintf("%d values for %d×%d", len(weights[i]), l.N, l.K)}
		case l.Bias && len(b) != l.N, !l.Bias && len(b) != 0:
			return nil, &ProgramError{Layer: l.Name, Field: "bias", Msg: fmt.Sprintf("%d values for N=%d, bias %v", len(b), l.N, l.Bias)}
		}
		src.w[i] = append([]float32(nil), weights[i]...)
		src.b[i] = append([]float32(nil), b...)
		src.digests[i] = spec.SourceDigest(rawmem.Bytes(src.w[i]), rawmem.Bytes(src.b[i]))
	}
	return newProgram(name, layers, src)
}
