// Package spec is the normative part of xpwc: the cache file formats (v2,
// byte-exact with ExecuTorch's XNNWeightsCache, and v3, the reference format
// that meets G1, G2 and G7), their encoders and strict parsers, the typed
// errors those parsers return, the identity of a packed weight (Key), and the
// lifecycle vocabulary and invariants the model and the cache share.
//
// Nothing here does I/O of its own: parsers read through an io.ReaderAt and
// a size, so one parser serves a mapping, a file and a byte slice. Every
// parser is defensive (G7): it never panics, never reads outside [0, size),
// and allocates in proportion to the real file size whatever the file
// declares. docs/format.md describes both layouts byte by byte.
package spec
