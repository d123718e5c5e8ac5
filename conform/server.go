package conform

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/sim"
)

// Adapter is what Serve puts behind the protocol: how to open an instance,
// and what to say in the hello.
type Adapter struct {
	Name         string
	Capabilities []string
	Format       string     // "v3", "v2" or ""
	Open         sim.Opener // on set_path; the filesystem passed is vfs.OS()
	_            struct{}
}

// Serve answers requests from in on out until destroy or EOF: the adapter
// side of the protocol for an implementation written in Go (cmd/conform-
// adapter). A request it cannot decode is answered with ok false, not
// dropped, so the driver never waits on it.
func Serve(a Adapter, in io.Reader, out io.Writer) error {
	s := server{a: a, res: map[uint64]sim.Reservation{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	for sc.Scan() {
		var req Request
		var resp *Response
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			resp = &Response{Error: "bad request: " + err.Error()}
		} else {
			resp = s.handle(&req)
		}
		resp.ID = req.ID
		if err := enc.Encode(resp); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if req.Op == OpDestroy {
			return nil
		}
	}
	return sc.Err()
}

type server struct {
	a     Adapter
	proto int // the version of this session
	inst  sim.Instance
	res   map[uint64]sim.Reservation
	next  uint64
}

func (s *server) handle(req *Request) *Response {
	if req.Op == OpHello {
		// The driver's version, if this side speaks it, else this side's.
		s.proto = min(max(req.Protocol, MinProtocol), Protocol)
		return &Response{OK: true, Protocol: s.proto, Name: s.a.Name, Capabilities: s.a.Capabilities, Format: s.a.Format}
	}
	if req.Op == OpSetPath {
		if s.inst != nil {
			return &Response{Error: "set_path: the instance is open"}
		}
		inst, err := s.a.Open(req.Path, vfs.OS())
		if err != nil {
			return &Response{Error: err.Error()}
		}
		s.inst = inst
		return &Response{OK: true}
	}
	if s.inst == nil {
		return &Response{Error: req.Op + ": no instance (set_path first)"}
	}
	r := &Response{OK: true}
	var err error
	switch req.Op {
	case OpInit:
		err = s.inst.InitializeForProgram(req.Program)
		st := s.inst.Stats()
		r.Load = st.Load.String()
		if k, ok := s.inst.(sim.ViewKeeper); ok && k.KeptView() && s.proto >= 2 {
			r.Load = LoadKept
		}
		if st.LoadErr != nil {
			r.LoadError, r.LoadCode = st.LoadErr.Error(), codeOf(st.LoadErr)
		}
	case OpLookUp:
		before := s.inst.Stats().Verified
		h, hit := s.inst.LookUp(req.Key.spec())
		r.Hit, r.Handle = hit, uint64(h)
		r.Checked = s.inst.Stats().Verified > before
	case OpReserve:
		var res sim.Reservation
		res, err = s.inst.ReserveSpace(req.Size)
		if err == nil {
			s.next++
			s.res[s.next] = res
			r.Reservation = s.next
			r.InFile = res.InFile
		}
		if fe := s.inst.Stats().FallbackErr; fe != nil {
			r.Fallback = codeOf(fe)
			if r.Fallback == "" {
				r.Fallback = "other"
			}
		}
	case OpInsert:
		res, ok := s.res[req.Reservation]
		switch {
		case !ok:
			err = fmt.Errorf("insert: no reservation %d", req.Reservation)
		case len(req.Data) > len(res.Buf):
			err = fmt.Errorf("insert: %d bytes into a reservation of %d", len(req.Data), len(res.Buf))
		default:
			delete(s.res, req.Reservation)
			copy(res.Buf, req.Data) // the packer's output, as XNNPACK writes it
			res.Buf = res.Buf[:len(req.Data)]
			err = s.inst.Insert(req.Key.spec(), res)
		}
	case OpIsFinalized:
		r.Finalized, err = s.inst.IsFinalized()
	case OpReadBytes:
		before := s.inst.Stats().Verified
		r.Data, err = s.inst.Bytes(sim.Handle(req.Handle))
		r.Checked = s.inst.Stats().Verified > before
		if errors.Is(err, cache.ErrCorruptData) {
			r.Data, r.Corrupt, err = nil, true, nil
		}
	case OpCompute:
		before := s.inst.Stats().Verified
		r.Data, err = s.inst.Bytes(sim.Handle(req.Handle))
		r.Checked = s.inst.Stats().Verified > before
		if errors.Is(err, cache.ErrCorruptData) {
			r.Data, r.Corrupt, err = nil, true, nil
		}
	case OpFinalize, OpSave, OpInvalidate:
		switch req.Op {
		case OpFinalize:
			err = s.inst.Finalize()
		case OpSave:
			err = s.inst.Save()
		default:
			err = s.inst.Invalidate(req.Weight)
		}
		st := s.inst.Stats()
		r.Compactions = st.Compactions
		if st.CommitErr != nil {
			r.CommitError = st.CommitErr.Error()
		}
	case OpStats:
		mc, ok := mapCounter(s.inst)
		if !ok {
			err = &sim.UnsupportedError{Op: OpStats}
			break
		}
		var ms []cache.MappedCopy
		if ms, err = mc.Mappings(); err == nil {
			for _, m := range ms {
				r.Mapped = append(r.Mapped, Mapped{Name: m.Name, Maps: m.Maps})
			}
		}
	case OpDeleteProgram:
		err = s.inst.DeleteProgram(req.Program)
	case OpDestroy:
		err = s.inst.Close()
		s.inst = nil
	default:
		return &Response{Error: fmt.Sprintf("unknown request %q", req.Op)}
	}
	if err != nil {
		r.OK, r.Error, r.Code = false, err.Error(), codeOf(err)
		r.Unsupported = errors.Is(err, sim.ErrNotSupported) && s.proto >= 2
	}
	return r
}

// mapCounter finds the MapCounter in, or behind the variant wrappers
// around it (each counts what the instance it wraps maps).
func mapCounter(in sim.Instance) (sim.MapCounter, bool) {
	for {
		if mc, ok := in.(sim.MapCounter); ok {
			return mc, true
		}
		u, ok := in.(interface{ Unwrap() sim.Instance })
		if !ok {
			return nil, false
		}
		in = u.Unwrap()
	}
}
