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
//
// The format API at a glance:
//
//   - Identity and entries: [Key], [Entry], [SplitName], [ValidTensorName].
//   - v2: [EncodeV2Index] (entries and footer, written at index_start),
//     [ParseV2] → [V2File], [DecodeV2Footer].
//   - v3 writing, in save order: [EncodeV3Header] once; per save append data
//     and [EncodeV3Index], sync, then [EncodeCommitSlot]([NewCommit](...)) at
//     [CommitSlotOffset](generation), sync.
//   - v3 reading: [ParseV3] → [V3File] (newest loadable commit),
//     [ReadCommitSlots] and [ParseCommitSlot] for diagnostics,
//     [VerifyEntryData] for the data CRC (G1), [CRC32C].
//   - Either: [DetectFormat] → [Format].
//   - Errors: every format error matches [ErrCorrupt]; the specific
//     sentinels ([ErrChecksum], [ErrNoCommit], ...) say which check failed;
//     [*FormatError] says where, [*VersionError] which version;
//     [ProblemNames] names them for reports.
package spec
