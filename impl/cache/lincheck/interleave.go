package lincheck

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// RunInterleaved runs w's clients on one goroutine, one cache call at a
// time, picking the client of each call with a generator seeded by w.Seed.
// Each client goes through the same steps as in Run (look up; on a miss
// reserve, pack, insert; and the lifecycle calls), so another client's
// finalize, save, compact or delete can fall between a reservation and its
// insert. The history has no overlapping operations: porcupine's check is
// exact and cheap, and a failure replays from the seed as a plain
// sequence of calls, which Describe prints. It complements Run, whose
// schedules come from the Go scheduler and do not replay.
func RunInterleaved(t Target, w Workload, rec *Recorder, handles *HandleTable) []error {
	r, err := newRunner(t, w, rec, handles)
	if err != nil {
		return []error{err}
	}
	r.errOnly(0, Input{Kind: KindInit, Program: 0})
	rng := rand.New(rand.NewPCG(w.Seed, 0x5e9))
	cls := make([]seqClient, w.Clients)
	clients := w.Clients
	var sp secondProc
	r.sp = &sp
	if w.Second {
		// The second process is one more client to pick.
		clients++
		defer r.closeSecond(w.Clients, &sp)
	}
	for range clients * w.Ops {
		c := rng.IntN(clients)
		if c == w.Clients {
			r.secondStep(rng, c, &sp)
			continue
		}
		if r.seqStep(rng, c, &cls[c]) {
			// A relaunch or a power loss: reservations of the closed instance are
			// never inserted (see runner.epoch).
			for i := range cls {
				cls[i].stage, cls[i].buf = 0, nil
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// seqClient is one client's place in XNNPACK's look up, reserve, pack,
// insert sequence.
type seqClient struct {
	stage uint8 // 0 idle, 1 missed (reserve next), 2 packed (insert next)
	n     int
	v     uint8
	buf   []byte
	mine  []held
}

// seqStep runs client c's next call; it reports whether it relaunched or
// cut the power.
func (r *runner) seqStep(rng *rand.Rand, c int, cl *seqClient) bool {
	switch cl.stage {
	case 1:
		p := r.rec.Call(c, Input{Kind: KindReserve, Name: cl.n})
		buf, err := r.t.ReserveSpace(Size(cl.n))
		p.Return(Output{Err: Classify(err)})
		cl.stage = 0
		if err == nil {
			Pack(buf, cl.n, cl.v)
			cl.buf, cl.stage = buf, 2
		}
		return false
	case 2:
		k := Key(cl.n, cl.v)
		p := r.rec.Call(c, Input{Kind: KindInsert, Name: cl.n, Variant: cl.v})
		h, err := r.t.LookUpOrInsert(k, cl.buf)
		p.Return(Output{Handle: r.handles.Number(h), Err: Classify(err)})
		cl.stage, cl.buf = 0, nil
		if err == nil {
			hd := held{h, cl.n, cl.v, r.epoch.Load()}
			r.checkBytes(hd)
			cl.mine = append(cl.mine, hd)
		}
		return false
	}
	if r.w.Relaunch > 0 && rng.IntN(100) < r.w.Relaunch {
		r.relaunch(c)
		return true
	}
	if r.w.PowerLoss > 0 && rng.IntN(100) < r.w.PowerLoss {
		r.powerLoss(c)
		return true
	}
	n := rng.IntN(r.w.Names)
	v := uint8(rng.IntN(r.w.Variants))
	q := uint8(rng.IntN(r.w.Programs))
	switch x := rng.IntN(100); {
	case x < 55:
		p := r.rec.Call(c, Input{Kind: KindLookUp, Name: n, Variant: v})
		h, hit := r.t.LookUp(Key(n, v))
		p.Return(Output{Hit: hit, Handle: r.handles.Number(h)})
		if hit {
			hd := held{h, n, v, r.epoch.Load()}
			r.checkBytes(hd)
			cl.mine = append(cl.mine, hd)
		} else {
			cl.stage, cl.n, cl.v = 1, n, v
		}
	case x < 62:
		r.reserveOnly(c, n, v)
	case x < 70 && len(cl.mine) > 0:
		r.checkBytes(cl.mine[rng.IntN(len(cl.mine))])
	default:
		r.errOnly(c, cacheWideInput(x, n, q))
	}
	return false
}

// Describe renders a history one operation per line in call order, with
// its client and interval: for a sequential history, the script that
// reproduces it.
func Describe(history []porcupine.Operation) string {
	ops := append([]porcupine.Operation(nil), history...)
	sort.Slice(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&b, "c%d [%d,%d] %s\n", op.ClientId, op.Call, op.Return, describe(op.Input.(Input), op.Output.(Output)))
	}
	return b.String()
}
