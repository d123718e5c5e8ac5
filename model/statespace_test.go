package model

import (
	"fmt"
	"os"
	"testing"
)

// TestStateSpaceProfile is a measurement, not a check: with
// XPWC_STATESPACE=NAMES:MAXSTATES it explores the reference breadth first
// in the explorer's canonical form (model.Canon; XPWC_STATESPACE_KEEP=1
// keeps dead fields) and prints the states per
// level and, for each projection of the state (a component forgotten), how
// many distinct projections the visited states have: the ratio of states to
// projections is what that component multiplies the space by.
func TestStateSpaceProfile(t *testing.T) {
	env := os.Getenv("XPWC_STATESPACE")
	if env == "" {
		t.Skip("set XPWC_STATESPACE=NAMES:MAXSTATES")
	}
	var names, maxStates int
	if _, err := fmt.Sscanf(env, "%d:%d", &names, &maxStates); err != nil {
		t.Fatal(err)
	}
	b := ExhaustiveBounds()
	b.Names = names
	d := ref(t)
	type proj struct {
		name string
		f    func(s *State)
		seen map[uint64]struct{}
	}
	forNames := func(f func(s *State, n int)) func(s *State) {
		return func(s *State) {
			for n := range maxNames {
				f(s, n)
			}
		}
	}
	procField := func(name string, f func(p *Proc)) *proj {
		return &proj{name: name, f: func(s *State) {
			for q := range s.Procs {
				f(&s.Procs[q])
			}
		}}
	}
	entField := func(name string, f func(e *Entry)) *proj {
		return &proj{name: name, f: func(s *State) {
			for q := range s.Procs {
				for n := range s.Procs[q].Ents {
					f(&s.Procs[q].Ents[n])
				}
			}
		}}
	}
	projs := []*proj{
		procField("LoadFlag", func(p *Proc) { p.LoadFlag = false }),
		procField("Replacing", func(p *Proc) { p.Replacing = false }),
		procField("FileOn", func(p *Proc) { p.FileOn = false }),
		procField("Clean", func(p *Proc) { p.Clean = false }),
		procField("Expect", func(p *Proc) { p.Expect = false }),
		procField("Blocked", func(p *Proc) { p.Blocked = false }),
		procField("HeapLaunch", func(p *Proc) { p.HeapLaunch = false }),
		procField("NoFile", func(p *Proc) { p.NoFile = false }),
		procField("Loaded", func(p *Proc) { p.Loaded = 0 }),
		procField("Phase", func(p *Proc) { p.Phase = 0 }),
		entField("Retired", func(e *Entry) { e.Retired = false }),
		entField("late bit", func(e *Entry) { e.Rec &^= recLate }),
	}
	if os.Getenv("XPWC_STATESPACE_ALL") != "" {
		projs = append(projs, []*proj{
			{name: "ghost", f: func(s *State) { s.GhostValid, s.Ghost = false, [maxNames]Rec{} }},
			{name: "garbage+volatile", f: func(s *State) { s.Disk.Garbage, s.Disk.Volatile = 0, 0 }},
			{name: "volatile", f: func(s *State) { s.Disk.Volatile = 0 }},
			{name: "tombs", f: func(s *State) { s.Procs[0].Tomb, s.Procs[1].Tomb = [maxNames]Rec{}, [maxNames]Rec{} }},
			{name: "copy labels", f: forNames(func(s *State, n int) {
				s.Disk.Idx[n] &^= recCopy
				for q := range s.Procs {
					s.Procs[q].Ents[n].Rec &^= recCopy
					s.Procs[q].Tomb[n] &^= recCopy
				}
			})},
			{name: "corrupt/late bits", f: forNames(func(s *State, n int) {
				s.Disk.Idx[n] &^= recCorrupt | recLate
				for q := range s.Procs {
					s.Procs[q].Ents[n].Rec &^= recCorrupt | recLate
					s.Procs[q].Tomb[n] &^= recCorrupt | recLate
				}
			})},
			{name: "entry flags V/R/F/C", f: forNames(func(s *State, n int) {
				for q := range s.Procs {
					e := &s.Procs[q].Ents[n]
					e.Verified, e.Retired, e.Fallback, e.CurIno = false, false, false, false
				}
			})},
			{name: "entry CurIno", f: forNames(func(s *State, n int) {
				for q := range s.Procs {
					s.Procs[q].Ents[n].CurIno = false
				}
			})},
			{name: "entry Verified", f: forNames(func(s *State, n int) {
				for q := range s.Procs {
					s.Procs[q].Ents[n].Verified = false
				}
			})},
			{name: "entry Fallback", f: forNames(func(s *State, n int) {
				for q := range s.Procs {
					s.Procs[q].Ents[n].Fallback = false
				}
			})},
			{name: "entry step+place", f: forNames(func(s *State, n int) {
				for q := range s.Procs {
					s.Procs[q].Ents[n].Step, s.Procs[q].Ents[n].Place = 0, 0
				}
			})},
			{name: "entry hold+maps", f: forNames(func(s *State, n int) {
				for q := range s.Procs {
					s.Procs[q].Ents[n].Hold, s.Procs[q].Ents[n].Maps = 0, 0
				}
			})},
			{name: "entry status", f: forNames(func(s *State, n int) {
				for q := range s.Procs {
					s.Procs[q].Ents[n].Status = 0
				}
			})},
			{name: "proc flags", f: func(s *State) {
				for q := range s.Procs {
					p := &s.Procs[q]
					p.FileOn, p.NoFile, p.Expect, p.Blocked, p.HeapLaunch, p.Replacing, p.Clean, p.Broken, p.LoadFlag = false, false, false, false, false, false, false, false, false
				}
			}},
			{name: "proc Clean+Expect", f: func(s *State) {
				for q := range s.Procs {
					s.Procs[q].Clean, s.Procs[q].Expect = false, false
				}
			}},
			{name: "proc Blocked+HeapLaunch+NoFile", f: func(s *State) {
				for q := range s.Procs {
					s.Procs[q].Blocked, s.Procs[q].HeapLaunch, s.Procs[q].NoFile = false, false, false
				}
			}},
			{name: "options", f: func(s *State) {
				for q := range s.Procs {
					s.Procs[q].OptCaller, s.Procs[q].OptModule = false, false
				}
			}},
			{name: "settled", f: func(s *State) { s.Env.Settled = 0 }},
			{name: "kernels", f: func(s *State) {
				s.Env.Kernel = 0
				for q := range s.Procs {
					s.Procs[q].Kernel = 0
				}
			}},
			{name: "name w1", f: func(s *State) {
				s.Disk.Idx[1], s.Ghost[1] = 0, 0
				for q := range s.Procs {
					s.Procs[q].Ents[1], s.Procs[q].Tomb[1] = Entry{}, 0
				}
			}},
			{name: "name w0", f: func(s *State) {
				s.Disk.Idx[0], s.Ghost[0] = 0, 0
				for q := range s.Procs {
					s.Procs[q].Ents[0], s.Procs[q].Tomb[0] = Entry{}, 0
				}
			}},
			{name: "names swapped (name symmetry)", f: func(s *State) {
				m := *s
				m.Disk.Idx[0], m.Disk.Idx[1] = s.Disk.Idx[1], s.Disk.Idx[0]
				m.Ghost[0], m.Ghost[1] = s.Ghost[1], s.Ghost[0]
				m.Env.Src[0], m.Env.Src[1] = s.Env.Src[1], s.Env.Src[0]
				for q := range m.Procs {
					p, o := &m.Procs[q], &s.Procs[q]
					p.Ents[0], p.Ents[1] = o.Ents[1], o.Ents[0]
					p.Tomb[0], p.Tomb[1] = o.Tomb[1], o.Tomb[0]
					p.Src[0], p.Src[1] = o.Src[1], o.Src[0]
				}
				var e1, e2 Encoding
				s.CanonicalEncoding(&e1)
				m.CanonicalEncoding(&e2)
				if string(e2[:]) < string(e1[:]) {
					*s = m
				}
			}},
			{name: "proc B", f: func(s *State) { s.Procs[1] = Proc{} }},
			{name: "disk", f: func(s *State) { s.Disk = Disk{} }},
		}...)
	}
	for _, p := range projs {
		p.seen = map[uint64]struct{}{}
	}
	var e Encoding
	canon := NewCanon(d, b, b.Symmetries(), os.Getenv("XPWC_STATESPACE_KEEP") != "")
	init := Init(b)
	canon.Encode(&init, &e)
	seen := map[uint64]struct{}{e.Fingerprint(): {}}
	level := []Encoding{e}
	alphabet := Alphabet(b)
	var buf []Outcome
	record := func(s State) {
		for _, p := range projs {
			x := s
			p.f(&x)
			var pe Encoding
			canon.Encode(&x, &pe)
			p.seen[pe.Fingerprint()] = struct{}{}
		}
	}
	record(init)
	for depth := 0; len(level) > 0 && len(seen) < maxStates; depth++ {
		var next []Encoding
		for i := range level {
			s := level[i].Decode()
			for _, op := range alphabet {
				buf = StepAppend(buf[:0], d, b, &s, op)
				for k := range buf {
					canon.Encode(&buf[k].Next, &e)
					fp := e.Fingerprint()
					if _, ok := seen[fp]; ok {
						continue
					}
					seen[fp] = struct{}{}
					next = append(next, e)
					record(e.Decode())
				}
			}
		}
		t.Logf("level %d: %d new, %d in all", depth+1, len(next), len(seen))
		level = next
	}
	t.Logf("exhausted: %v, states %d", len(level) == 0, len(seen))
	for _, p := range projs {
		t.Logf("%-32s %9d projections, states/projections %6.2f", "forget "+p.name+":", len(p.seen), float64(len(seen))/float64(len(p.seen)))
	}
}
