// Package kernels holds the weight packers and the fully-connected compute
// kernels that consume their output: what the cache stores (docs/kernels.md).
//
// A Kernel is one packer + compute pair with a fixed packed layout in
// XNNPACK's "goi" form: for every panel of nr output channels, nr biases,
// then round_up(K, kr·sr)/kr K-steps of nr×kr weights, then per-panel extra
// bytes (per-channel scales for qc8w), with zero padding.
//
// Every kernel carries two identities that a persistent cache keys on
// (guarantee G1):
//
//   - Seed: a hash of the layout parameters and an explicit layout version.
//     Unlike XNNPACK's FC seed (N ⊕ K ⊕ nr ⊕ kr ⊕ sr ⊕ …, which collides
//     when N and K swap and ignores the packing routine), it is a keyed
//     FNV-1a hash of a canonical encoding.
//   - Fingerprint: a hash of the packer's output on fixed pseudo-random
//     input, as newer XNNPACK computes, so a changed packer is noticed even
//     when nobody bumped the layout version. The golden test pins both.
//
// Packed buffers are []byte because they live in a file mapping or on the
// heap. Floats are read from them in native byte order through unsafe.Slice,
// so a buffer must be 4-byte aligned (the cache gives 64); a misaligned
// buffer is reported as ErrMisaligned, never a crash. Seeds and fingerprints
// are therefore stable across processes and across machines of one
// architecture (byte order), which is the scope of a cache file.
//
// The f32 nr16 kernel computes with AVX-512F or AVX2/FMA micro-kernels when
// the CPU has them, chosen at start-up; every kernel also has a pure-Go path,
// the only one off amd64. See docs/kernels.md for layouts and measurements.
package kernels
