package conform

import (
	"errors"
	"fmt"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// Protocol is the newest version of the JSON-lines protocol this package
// speaks; MinProtocol the oldest. The driver says Protocol in its hello and
// an adapter answers with the version it speaks; one outside the two is
// refused (ErrVersion), since a field whose meaning changed would be judged
// wrongly rather than fail. Version 2 adds the unsupported answer, the
// load word kept and the requests compute and stats; a version 1 adapter
// never sends or is asked any of them.
const (
	Protocol    = 2
	MinProtocol = 1
)

// LoadKept is the load word (version 2) of an init that runs no loader:
// the instance keeps the view it has (ExecuTorch's init with entries in
// memory). Its load is not compared; what the view holds is, at the next
// look-ups.
const LoadKept = "kept"

// The requests, one JSON object per line on the adapter's stdin, each
// answered by one line on its stdout with the same id (docs/conform.md).
const (
	OpHello         = "hello"          // protocol: the driver's version
	OpSetPath       = "set_path"       // path: the cache file ("" for heap only); opens the instance
	OpInit          = "init"           // program: initialize for a program (loads the index)
	OpLookUp        = "lookup"         // key: XNNPACK look_up
	OpReserve       = "reserve"        // size: reserve_space
	OpInsert        = "insert"         // key, reservation, data: look_up_or_insert with the packed bytes
	OpIsFinalized   = "is_finalized"   // is the last initialized program finalized
	OpReadBytes     = "read_bytes"     // handle: the bytes of an entry
	OpFinalize      = "finalize"       // end the program's packing, commit what is new
	OpSave          = "save"           // commit explicitly
	OpInvalidate    = "invalidate"     // weight: drop it from the instance's view
	OpDeleteProgram = "delete_program" // program: release its entries
	OpDestroy       = "destroy"        // close the instance; the adapter exits after answering
	// OpCompute (version 2): handle: an inference's read of an entry after
	// finalize, where a cache that checks at the compute checks it.
	OpCompute = "compute"
	// OpStats (version 2, capability stats): how many mappings of each
	// copy of packed bytes the instance holds (I7).
	OpStats = "stats"
)

// Request is one line from the driver. Fields a request does not take are
// left out.
type Request struct {
	ID          uint64 `json:"id"`
	Op          string `json:"op"`
	Protocol    int    `json:"protocol,omitempty"`
	Path        string `json:"path,omitempty"`
	Program     string `json:"program,omitempty"`
	Key         *Key   `json:"key,omitempty"`
	Size        int    `json:"size,omitempty"`
	Reservation uint64 `json:"reservation,omitempty"`
	Data        []byte `json:"data,omitempty"` // base64 in JSON
	Handle      uint64 `json:"handle,omitempty"`
	Weight      string `json:"weight,omitempty"`
}

// Key is an entry's identity as the XNNPACK provider sees it (spec.Key).
type Key struct {
	Weight      string `json:"weight"`
	Bias        string `json:"bias"`
	Seed        uint32 `json:"seed"`
	Fingerprint uint64 `json:"fingerprint"`
	Source      uint64 `json:"source"`
}

func keyOf(k spec.Key) *Key {
	return &Key{Weight: k.Weight, Bias: k.Bias, Seed: k.Seed, Fingerprint: k.Fingerprint, Source: k.Source}
}

func (k *Key) spec() spec.Key {
	if k == nil {
		return spec.Key{}
	}
	return spec.Key{Weight: k.Weight, Bias: k.Bias, Seed: k.Seed, Fingerprint: k.Fingerprint, Source: k.Source}
}

// Response is one line from the adapter. OK false carries Error, and Code
// when the failure is one the model knows (CodeLockBusy).
type Response struct {
	ID    uint64 `json:"id"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
	// Unsupported (version 2, with OK false): the cache has no such
	// operation (ExecuTorch has no invalidate). The run ends there, not
	// claimed from that step.
	Unsupported bool `json:"unsupported,omitempty"`

	// hello
	Protocol     int      `json:"protocol,omitempty"`
	Name         string   `json:"name,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	Format       string   `json:"format,omitempty"` // "v3", "v2" or "" (a format of its own)

	// init: what loading the committed index found (LoadOutcome values of
	// impl/cache: ok, missing, rejected, locked, disabled, failed,
	// other-format) and, when it failed, why.
	Load      string `json:"load,omitempty"`
	LoadError string `json:"load_error,omitempty"`
	LoadCode  string `json:"load_code,omitempty"`

	// lookup, insert
	Hit    bool   `json:"hit,omitempty"`
	Handle uint64 `json:"handle,omitempty"`
	// Checked: this look-up (or read_bytes, compute: this read) checked
	// the entry's data (checksum) before handing it out (capability
	// checksums).
	Checked bool `json:"checked,omitempty"`

	// reserve
	Reservation uint64 `json:"reservation,omitempty"`
	// InFile: the reserved space is in the cache file. An adapter that
	// never says so is judged by the file's growth, which misses space a
	// writer allocated ahead.
	InFile bool `json:"in_file,omitempty"`
	// Fallback is the code of the last fall back to heap ("" none,
	// CodeLockBusy, or another word of the adapter's).
	Fallback string `json:"fallback,omitempty"`

	// read_bytes, compute
	Data []byte `json:"data,omitempty"`
	// Corrupt (read_bytes, compute): the check this read made failed; no
	// bytes. The
	// driver re-packs as the runtime does (look-up, reserve, insert, save)
	// and computes again.
	Corrupt bool `json:"corrupt,omitempty"`

	// is_finalized
	Finalized bool `json:"finalized,omitempty"`

	// finalize, save, invalidate: the commit failure the cache recorded
	// (what I12 lets an explicit save report) and how many times the
	// instance rewrote the file so far (capability compaction).
	CommitError string `json:"commit_error,omitempty"`
	Compactions uint64 `json:"compactions,omitempty"`

	// stats: every copy of packed bytes the instance maps from a file.
	Mapped []Mapped `json:"mapped,omitempty"`
}

// Mapped is one copy of packed bytes an instance maps from a file (stats):
// the entry's name (its weight's name, or the weight and bias names
// concatenated as a v2 file stores them) and how many mappings (or other
// copies in memory) of those bytes the instance holds. More than one
// breaks I7.
type Mapped struct {
	Name string `json:"name"`
	Maps int    `json:"maps"`
}

// CodeLockBusy is the code of a failure or fallback because another
// process holds the writer lock (G8).
const CodeLockBusy = "lock-busy"

// The capabilities an adapter may claim in its hello. A scenario that needs
// one the adapter does not claim is reported "not claimed", not run.
const (
	// CapFormatV3: the file at the path is a spec v3 file, which the
	// driver reads after every write and scribbles on (foreign writers).
	CapFormatV3 = "format-v3"
	// CapSeeds: a look-up compares the kernel seed, fingerprint and source
	// digest of the key, so upgrades and source changes miss (G1, G3).
	CapSeeds = "seeds"
	// CapChecksums: entry data is checked before its first hand-out, so
	// bytes changed on disk are never served (G1).
	CapChecksums = "checksums"
	// CapCrashSafeCommit: a crash at any instant of a commit leaves the old
	// or the new committed index, and a damaged index is replaced (G2, G7).
	CapCrashSafeCommit = "crash-safe-commit"
	// CapLocking: processes on one path take a writer lock; the one that
	// loses packs to heap with reason lock-busy (G6, G8).
	CapLocking = "locking"
	// CapCompaction: commits rewrite the file when garbage passes a bound
	// (G4); responses report the count of rewrites.
	CapCompaction = "compaction"
	// CapOnCompute: entries are checked at the first compute after
	// finalize, not at the look-up (the runtime's default policy): the
	// scenarios of the design on-compute need it (and protocol 2).
	CapOnCompute = "verify-on-compute"
	// CapStats: the adapter answers stats (protocol 2), which the driver
	// asks after every op of a process, so I7 is judged on its counts.
	CapStats = "stats"
)

// Capabilities lists every capability, in the order reports print them.
func Capabilities() []string {
	return []string{CapFormatV3, CapSeeds, CapChecksums, CapCrashSafeCommit, CapLocking, CapCompaction, CapOnCompute, CapStats}
}

// ErrProtocol is matched by every *ProtocolError.
var ErrProtocol = errors.New("conform: the adapter broke the protocol")

// ProtocolError is an adapter's failure to speak the protocol: a line that
// does not parse, an answer to another request, a wrong version, silence
// past the timeout, an exit. It matches sim.ErrImplementation too, so a run
// stops with it as its verdict.
type ProtocolError struct {
	Kind string // one of the Fault* values
	Op   string // the request it happened on
	Msg  string
}

// The kinds of ProtocolError.
const (
	FaultGarbage    = "garbage"      // a line that is not a response
	FaultOrder      = "out-of-order" // an answer to another request
	FaultVersion    = "version"      // a protocol version this driver does not speak
	FaultTimeout    = "timeout"      // no answer within the request timeout
	FaultExit       = "exit"         // the adapter exited or closed its stdout
	FaultStart      = "start"        // the adapter could not be started
	FaultCapability = "capability"   // a capability this driver does not know
)

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("conform: adapter %s on %s: %s", e.Kind, e.Op, e.Msg)
}

// Unwrap lets errors.Is match ErrProtocol and sim.ErrImplementation.
func (e *ProtocolError) Unwrap() []error { return []error{ErrProtocol, errImplementation} }

// errorOf turns a failed response into an error; CodeLockBusy wraps
// cache.ErrLockBusy, which the harness recognises.
func errorOf(r *Response) error {
	if r.OK {
		return nil
	}
	return codeError(r.Code, r.Error)
}

func codeError(code, msg string) error {
	if msg == "" {
		msg = "failed"
		if code == CodeLockBusy {
			msg = "another process holds the writer lock"
		}
	}
	if code != "" {
		msg += " (" + code + ")"
	}
	return &codeErr{code: code, msg: msg}
}

// codeErr is a failure an adapter reported, in its words and with its
// code. The code lock-busy matches cache.ErrLockBusy, which the harness
// recognises (G8), without borrowing that error's words: the adapter's
// cache may have no lock file.
type codeErr struct{ code, msg string }

func (e *codeErr) Error() string { return e.msg }

func (e *codeErr) Is(target error) bool { return e.code == CodeLockBusy && target == cache.ErrLockBusy }

// codeOf is the protocol's code of err.
func codeOf(err error) string {
	if errors.Is(err, cache.ErrLockBusy) || errors.Is(err, vfs.ErrWouldBlock) {
		return CodeLockBusy
	}
	return ""
}
