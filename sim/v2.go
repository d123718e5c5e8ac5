package sim

import (
	"bytes"
	"fmt"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// The v2 format in lockstep: the scenario directive `format v2` (or
// Config.Format) makes the caches write spec.FormatV2, ExecuTorch's
// layout, and holds them to the design v2 is: ExecuTorch's trailer (no
// commit point, no checksum, V2Design). Everything v2 gives up that the
// model cannot tell apart is written here, once (docs/model.md, "v2 in
// conformance"): the rules of comparison (v2Want, v2File) and
// what a v2 run is held to at all (V2Allow).

// directiveV2 is the directive that opens a v2 scenario.
const directiveV2 = "format v2"

// V2Design is the design the v2 format is held to: ExecuTorch's trailer
// (no commit point, no checksum), with automatic compaction off on both
// sides: the model counts garbage in packings and the cache in bytes, so
// they would compact at different moments.
func V2Design() (model.Design, error) {
	d, err := model.DesignByName("no-commit-point")
	d.NoCompaction = true
	return d, err
}

// execFormat is `format v2`: before the first lifecycle directive, in
// place of a design.
func (r *Runner) execFormat(line string, args []string) (string, error) {
	if r.started {
		return "", &HarnessError{Line: line, Msg: "format must come before the first lifecycle directive"}
	}
	if len(args) != 1 || args[0] != "v2" {
		return "", &HarnessError{Line: line, Msg: "want format v2 (v3 is the default)"}
	}
	if r.design.Name != "reference" && !r.v2 {
		return "", &HarnessError{Line: line, Msg: "format v2 sets the design; name no other"}
	}
	if err := r.setV2(); err != nil {
		return "", &HarnessError{Line: line, Msg: err.Error()}
	}
	// The same text in lockstep and model only: a scenario the property
	// writes from the model replays on the cache.
	return fmt.Sprintf("v2, held to %s with compaction off\nsource: %s", r.design.Name, r.design.Source), nil
}

func (r *Runner) setV2() error {
	if r.cfg.Open != nil {
		return fmt.Errorf("an opened implementation writes v3 only")
	}
	d, err := V2Design()
	if err != nil {
		return err
	}
	r.design, r.v2 = d, true
	return nil
}

// v2Options are the in-process cache's options in a v2 run.
func v2Options(o cache.Options) cache.Options {
	o.Format, o.CompactGarbageRatio = spec.FormatV2, -1
	return o
}

// V2Allow reports whether a v2 run on backend b can perform op in model
// state s and is held to its outcome: Generate's Allow and the shrinker's
// filter for v2. A crash happens between operations or, on crashfs, inside
// a commit of the writer-lock holder when that process is the only one
// with an instance (crashfs crashes one process only when it is alone);
// other crash points (a forged trailer) are the crash-point enumeration's
// (faultinject/crashpoint), on bytes. Options belong to the module, not to
// the cache. The rest is what v2 gives up (v2Demands).
func V2Allow(b Backend) func(s *model.State, op spec.Op) bool {
	return func(s *model.State, op spec.Op) bool {
		if op.Kind == spec.EvClobberOptions {
			return false
		}
		if op.Kind == spec.EvCrash && op.Branch != spec.BranchIdle && op.Branch != spec.BranchMidSave {
			return false
		}
		if !v2Demands(b, s, op) {
			return false
		}
		if op.Kind != spec.EvCrash || op.Branch != spec.BranchMidSave {
			return true
		}
		return b == BackendCrashFS && s.Disk.Lock == uint8(op.Proc)+1 && (op.Crash == spec.CrashPower || aloneIn(s, op.Proc))
	}
}

// v2Demands reports whether a v2 run demands the v2 design's outcome of op
// (docs/model.md, "v2 in conformance"). v2 stores no checksum, so a
// foreign write to an entry's bytes is served, and no source digest, so a
// source change is not seen once the process that packed the entry is
// gone: neither is generated. While the lock holder has appended space
// since its commit the file ends in that space, not in a footer: a process
// crash of the holder alone on crashfs leaves it so (the model's mid-save:
// no trailer parses, every entry is lost), any other end of the holder
// closes it, which ends the file with its last commit again (idle). A power
// loss then keeps or drops the appended space by which unsynced writes
// survive, an outcome the model does not predict: not generated. An
// empty index removes the file, and with it the session its writer held
// the lock in: another process's load then finds no file where the
// model's finds the lock (which keeps that launch off the file), and its
// reservation or explicit commit takes the lock the model's holder still
// has: not generated while the model's lock is another's.
func v2Demands(b Backend, s *model.State, op spec.Op) bool {
	switch op.Kind {
	case spec.EvForeign, spec.EvSourceChange:
		return false
	case spec.OpInit, spec.OpReserve, spec.OpSave, spec.OpInvalidate:
		return !emptyIndex(s) || s.Disk.Lock == 0 || s.Disk.Lock == uint8(op.Proc)+1
	case spec.EvCrash:
		if op.Crash == spec.CrashPower && s.Disk.State == model.DiskCorrupt {
			// On v2 an unreadable file is one a writer's crash left
			// ending in its appended space (no foreign writes here); a
			// power loss keeps or drops that space by which unsynced
			// writes survive, and dropping it brings the old footer
			// back: neither design predicts which.
			return false
		}
		if !holderAppended(s) {
			// A holder writing a new file writes it under a temporary
			// name, which a crash leaves unused: the model's idle.
			return op.Branch != spec.BranchMidSave
		}
		if op.Crash == spec.CrashPower {
			return false
		}
		realCrash := b == BackendCrashFS && s.Disk.Lock == uint8(op.Proc)+1 && aloneIn(s, op.Proc)
		return realCrash == (op.Branch == spec.BranchMidSave)
	}
	return true
}

// holderAppended reports whether the writer-lock holder has grown the
// live file since its commit: an entry packed or space reserved there. A
// holder that writes a new file (none yet, replacing an unreadable one, or
// after an empty index, which v2 expresses by removing the file) writes it
// under a temporary name, so the live file keeps its end.
func holderAppended(s *model.State) bool {
	if s.Disk.Lock == 0 || s.Disk.State != model.DiskValid {
		return false
	}
	pr := &s.Procs[s.Disk.Lock-1]
	if pr.Replacing || emptyIndex(s) {
		return false
	}
	if s.Disk.Volatile > 0 {
		// Space appended since the commit and left as garbage (an insert
		// that found its packing already there): the file still ends in
		// it until the holder commits again.
		return true
	}
	for n := range pr.Ents {
		if e := &pr.Ents[n]; e.Status == spec.EntryAppended || e.ReservedInFile() {
			return true
		}
	}
	return false
}

// emptyIndex reports whether the model's committed index is valid and
// lists nothing: v2 cannot express it, its commit removes the file.
func emptyIndex(s *model.State) bool {
	if s.Disk.State != model.DiskValid {
		return false
	}
	for _, r := range s.Disk.Idx {
		if r.Present() {
			return false
		}
	}
	return true
}

// aloneIn reports whether p is the only process with an instance in s.
func aloneIn(s *model.State, p spec.Proc) bool {
	for q := range s.Procs {
		if spec.Proc(q) != p && s.Procs[q].Phase != spec.PhaseNoInstance {
			return false
		}
	}
	return true
}

// v2Want is the model's result of out as a v2 cache shows it, given what
// the cache observed (got) and whether the file ended in appended space
// before the step (tailOpen).
func (r *Runner) v2Want(out *model.Outcome, got spec.Result, tailOpen bool) spec.Result {
	want, s := out.Result, &out.Next
	switch out.Op.Kind {
	case spec.OpInit:
		if !emptyIndex(s) {
			break
		}
		// An empty index has no file, so the load finds it missing.
		if want.Load == spec.LoadOK {
			want.Load = spec.LoadMissing
		}
	case spec.OpFinalize, spec.OpSave, spec.OpInvalidate:
		// The re-terminating commit: a writer whose file ends in space it
		// appended since its commit commits again to end it with a footer
		// (docs/cache.md), the model's index again, compared as the file
		// after the step. v2 gives up "nothing written when nothing
		// changed" here.
		if tailOpen && got.Wrote && !want.Wrote && r.real.v2Parses() {
			want.Wrote = true
		}
	}
	return want
}

// v2File is the file the model's disk is as v2 writes it; ok is false
// while the writer-lock holder has appended space since its commit: the
// file ends in that space and its committed trailer cannot be found by
// position until the holder commits or closes (only the holder can read it
// then: a load waits for the lock).
func v2File(b model.Bounds, s *model.State) (want string, ok bool) {
	switch {
	case holderAppended(s):
		return "", false
	case emptyIndex(s):
		return "empty", true
	}
	return DescribeDisk(b, s.Disk), true
}

// v2Parses reports whether the live file exists and ends in a v2 footer.
func (w *world) v2Parses() bool {
	_, err := w.parseV2()
	return err == nil
}

func (w *world) parseV2() (*spec.V2File, error) {
	b, err := w.readFile()
	if err != nil {
		return nil, err
	}
	return spec.ParseV2(bytes.NewReader(b), int64(len(b)))
}

// v2TailOpen reports whether the live file exists and does not end in a
// footer: its writer appended since its commit.
func (w *world) v2TailOpen() bool {
	_, err := w.parseV2()
	return err != nil && !isNotExist(err)
}

// describeV2 is describeFile for a v2 file: each entry's kernel version
// from its seed; v2 stores neither the fingerprint nor the source digest
// (a v2 run changes no source), nor a checksum to mark changed bytes by.
func (w *world) describeV2(b model.Bounds) string {
	f, err := w.parseV2()
	switch {
	case isNotExist(err):
		return "empty"
	case err != nil:
		return "corrupt"
	}
	return describeEntries(b, f.Entries, func(e spec.Entry) (int, string) {
		n, kv := nameIndex(e.Key.V2Name()), int64(e.Key.Seed)-100
		if n < 0 || kv < 0 || kv > 1 {
			return -1, e.Key.V2Name()
		}
		return n, fmt.Sprintf("k%ds0", kv)
	})
}
