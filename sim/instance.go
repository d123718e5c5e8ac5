package sim

import (
	"fmt"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// Instance is one process's cache instance as the harness drives it: the
// XNNPACK weights-cache provider and ExecuTorch's lifecycle, and the few
// counters the harness observes. The in-process cache satisfies it through
// GoInstance; package conform satisfies it for a cache that runs in another
// process (any language, behind a JSON-lines protocol), so that the
// scenario suite, random runs and shrinking judge every implementation the
// same way.
type Instance interface {
	// Path is the cache file the instance uses, "" for a heap-only one.
	Path() string
	// InitializeForProgram starts packing a program: on first use it loads
	// the committed index, later it refreshes the instance's view (G3).
	InitializeForProgram(program string) error
	// LookUp returns a handle of the entry whose key matches k in every
	// field (G1).
	LookUp(k spec.Key) (Handle, bool)
	// Bytes returns the packed bytes behind h.
	Bytes(h Handle) ([]byte, error)
	// ReserveSpace returns n bytes for the packer to write into, to be
	// handed to Insert.
	ReserveSpace(n int) (Reservation, error)
	// Insert inserts the bytes packed into r under k (look_up_or_insert).
	Insert(k spec.Key, r Reservation) error
	// IsFinalized reports whether the last initialized program was
	// finalized.
	IsFinalized() (bool, error)
	// Finalize ends the program's packing and commits what is new (G2, G4).
	Finalize() error
	// Save commits explicitly. A failure because another process holds
	// the writer lock wraps cache.ErrLockBusy.
	Save() error
	// Invalidate drops a weight from the instance's view; the next commit
	// drops it from the file.
	Invalidate(weight string) error
	// DeleteProgram releases a program's references to its entries.
	DeleteProgram(program string) error
	// Close destroys the instance cleanly, committing nothing.
	Close() error
	// Kill ends the instance the way a crash of its process does. An
	// instance that lives in this process cannot die alone; it closes
	// without committing, which leaves the same disk (see world.kill).
	Kill()
	// Stats returns the counters the harness reads: Load, LoadErr,
	// FallbackErr, CommitErr, Verified and Compactions. An implementation
	// in another process fills only those.
	Stats() cache.Stats
	// Names lists the entries the instance indexes, for traces.
	Names() []string
	// Fault is a failure of the implementation itself rather than a result
	// (a broken protocol, a timeout, a dead process): nil while the
	// instance answers. A run stops with it as its verdict.
	Fault() error
}

// MapCounter is an Instance that reports, for each copy of packed bytes
// it maps from a file, how many mappings of it it holds, so that I7 (no
// file range mapped twice in one process) is judged on what it did. An
// implementation that cannot say returns an error matching
// ErrNotSupported, and I7 is not judged.
type MapCounter interface {
	Mappings() ([]cache.MappedCopy, error)
}

// Handle names an entry an Instance handed out.
type Handle uint64

// Reservation is space an Instance reserved: the packer writes Buf, Insert
// takes it back. ID names it to an implementation in another process.
// InFile is the instance's word that the space is in the cache file; an
// instance that does not say leaves the harness to watch the file grow.
type Reservation struct {
	ID     uint64
	Buf    []byte
	InFile bool
}

// Opener opens an Instance on the cache file path ("" for heap only).
// fsys is the backend's filesystem; an implementation in another process
// cannot use it and runs on BackendOS only.
type Opener func(path string, fsys vfs.FS) (Instance, error)

// OpenGo is the Opener of the in-process cache as the reference design
// models it: data checked at the look-up that hands an entry out
// (cache.VerifyOnFirstUse; the library's default checks at Bytes, which
// the protocol's look-up does not call).
func OpenGo(path string, fsys vfs.FS) (Instance, error) {
	return OpenGoWith(cache.Options{VerifyData: cache.VerifyOnFirstUse})(path, fsys)
}

// OpenGoWith is the Opener of the in-process cache with opts, the path and
// filesystem the harness gives replacing opts' own: the same cache under
// another policy (cache.VerifyOnCompute, held to the same model) or
// format. It never runs the prefault goroutine: verifying ahead checks
// entries on its own schedule, so whether a look-up or a compute is the
// one that checks would depend on timing, not on the ops the model sees.
func OpenGoWith(opts cache.Options) Opener {
	return func(path string, fsys vfs.FS) (Instance, error) {
		o := opts
		o.Path, o.FS, o.DisablePrefault = path, fsys, true
		c, err := cache.Open(o)
		if err != nil {
			return nil, err
		}
		return GoInstance(c), nil
	}
}

// GoInstance wraps an open cache as an Instance.
func GoInstance(c *cache.Cache) Instance { return &goInstance{c: c} }

// goInstance is the in-process cache behind Instance. Handles are indices
// into hs (plus one, so the zero Handle is never valid).
type goInstance struct {
	c  *cache.Cache
	hs []cache.Handle
}

var _ Instance = (*goInstance)(nil)

func (g *goInstance) Path() string                        { return g.c.Path() }
func (g *goInstance) InitializeForProgram(p string) error { return g.c.InitializeForProgram(p) }

func (g *goInstance) LookUp(k spec.Key) (Handle, bool) {
	h, ok := g.c.LookUp(k)
	if !ok {
		return 0, false
	}
	g.hs = append(g.hs, h)
	return Handle(len(g.hs)), true
}

func (g *goInstance) Bytes(h Handle) ([]byte, error) {
	if h == 0 || int(h) > len(g.hs) {
		return nil, fmt.Errorf("%w: %d", cache.ErrStaleHandle, h)
	}
	return g.c.Bytes(g.hs[h-1])
}

func (g *goInstance) ReserveSpace(n int) (Reservation, error) {
	b, err := g.c.ReserveSpace(n)
	return Reservation{Buf: b, InFile: err == nil && g.c.ReservedInFile(b)}, err
}

func (g *goInstance) Insert(k spec.Key, r Reservation) error {
	_, err := g.InsertHandle(k, r)
	return err
}

// InsertHandle is Insert returning the handle look_up_or_insert returns,
// which the runtime computes from (handleInserter).
func (g *goInstance) InsertHandle(k spec.Key, r Reservation) (Handle, error) {
	h, err := g.c.LookUpOrInsert(k, r.Buf)
	if err != nil {
		return 0, err
	}
	g.hs = append(g.hs, h)
	return Handle(len(g.hs)), nil
}

// handleInserter is an Instance whose insert returns the entry's handle
// (the in-process cache). Behind the protocol an insert returns none, and
// a compute looks the key up for it.
type handleInserter interface {
	InsertHandle(k spec.Key, r Reservation) (Handle, error)
}

func (g *goInstance) IsFinalized() (bool, error)            { return g.c.IsFinalized(), nil }
func (g *goInstance) Finalize() error                       { return g.c.Finalize() }
func (g *goInstance) Save() error                           { return g.c.Save() }
func (g *goInstance) Invalidate(w string) error             { return g.c.Invalidate(w) }
func (g *goInstance) DeleteProgram(p string) error          { return g.c.DeleteProgram(p) }
func (g *goInstance) Close() error                          { return g.c.Close() }
func (g *goInstance) Kill()                                 { _ = g.c.Close() }
func (g *goInstance) Stats() cache.Stats                    { return g.c.Stats() }
func (g *goInstance) Names() []string                       { return g.c.Names() }
func (g *goInstance) Mappings() ([]cache.MappedCopy, error) { return g.c.Mappings(), nil }
func (g *goInstance) Fault() error                          { return nil }
