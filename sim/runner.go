package sim

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// Config configures a Runner.
type Config struct {
	// Backend is where the real cache runs; BackendModel (or a design other
	// than the reference) runs the model alone.
	Backend Backend
	// Dir is the directory of the cache file on BackendOS.
	Dir string
	// Faults, in the faultinject/errorfs DSL, wraps the cache's filesystem
	// in an error injector. The model knows nothing of faults, so once an
	// injected fault reaches the cache (anything but a lying flush) only
	// safety is compared, not placements or writes (G8): no
	// operation fails, except an explicit save whose failure the cache
	// records in Stats.CommitErr (I12), and no hit hands out wrong bytes.
	Faults string
	// AnyViolation makes an invariant violation fail the step under every
	// design, not only under the reference (simrun random --design).
	AnyViolation bool
	// Trace, when set, receives a step-by-step account: each directive,
	// the model's result and state, and the cache's observable state.
	Trace io.Writer
	// Open opens each process's cache instance; nil is the in-process
	// cache (OpenGo). An implementation in another process runs on
	// BackendOS without Faults.
	Open Opener
	// VerifyData is the data-verification policy of the in-process cache
	// when Open is nil; the zero value is on-first-use, the check at the
	// look-up the designs without CheckAtCompute model. The
	// harness reads a hit's bytes right after its look-up, as a compute
	// does, so under cache.VerifyOnCompute the check moves from the
	// look-up to that read and the model's look-up covers both.
	VerifyData cache.VerifyPolicy
	// OpaqueFile: the implementation's file is in a format of its own,
	// which spec does not read, so the file is not held to the model's
	// committed index (results and writes still are).
	OpaqueFile bool
	// FileEachStep holds the file to the model's committed index after
	// every step, not only after the steps that wrote: a committed index
	// that changes without a commit is caught where it changes.
	FileEachStep bool
	// AdoptCompaction lets a commit take the implementation's compaction
	// decision where the scenario names another one the model allows (G4
	// bounds garbage; it does not fix the moment of a rewrite). Generated
	// sequences always adopt (RunOps).
	AdoptCompaction bool
	// Unchecked: the implementation does not claim to check data (no
	// checksums), so whether an op checked is not compared; the bytes it
	// hands out still are (I2).
	Unchecked bool
	// Format is the format the in-process cache writes: spec.FormatV2
	// runs every scenario as the directive `format v2` does (V2Design);
	// the zero value is v3 under the scenario's design.
	Format spec.Format
	// wrapFaults, in tests, wraps the parsed injector (to observe it).
	wrapFaults func(errorfs.Injector) errorfs.Injector
	_          struct{}
}

// Runner replays one scenario. It is not safe for concurrent use.
type Runner struct {
	cfg     Config
	design  model.Design
	bounds  model.Bounds
	st      model.State
	steps   int // lifecycle directives performed
	started bool
	real    *world
	inj     errorfs.Injector
	// surfaced: an injected fault reached the cache (see partial).
	surfaced bool
	known    []Known
	// v2: the caches write v2, held to V2Design (`format v2`).
	v2 bool
	// adopt: a commit takes the cache's compaction decision (generated
	// sequences); otherwise the op must name it (scenario files).
	adopt bool
	// diverted: a commit took a branch the generator's model did not, so
	// later generated ops may not be enabled any more.
	diverted bool
	last     spec.Op // the last op performed, with the branch it took
	// performed lists the lifecycle ops stepped, each with its branch, and
	// observed the cache's result of the last (see Trace).
	performed []spec.Op
	observed  spec.Result
	results   []spec.Result
}

// Trace is what a run stepped: the design and bounds, every lifecycle op
// with the branch it took (the failing one last), and the cache's result
// of the last op. A judge replays it under the model's designs.
type Trace struct {
	Design   string
	Bounds   model.Bounds
	Ops      []spec.Op
	Observed spec.Result
	// Results is the cache's result of every op of Ops (the last is
	// Observed); empty on the model alone.
	Results []spec.Result
}

// Trace returns the run's trace so far.
func (r *Runner) Trace() Trace {
	return Trace{Design: r.design.Name, Bounds: r.bounds, Ops: append([]spec.Op(nil), r.performed...), Observed: r.observed,
		Results: append([]spec.Result(nil), r.results...)}
}

// NewRunner returns a runner on the reference design with the model's
// default bounds; design and bounds directives may change both before the
// first lifecycle directive.
func NewRunner(cfg Config) (*Runner, error) {
	r := &Runner{cfg: cfg, bounds: model.DefaultBounds(), known: KnownDivergences(), adopt: cfg.AdoptCompaction}
	d, err := model.DesignByName("reference")
	if err != nil {
		return nil, err
	}
	r.design = d
	if cfg.Faults != "" {
		if r.inj, err = errorfs.Parse(cfg.Faults); err != nil {
			return nil, err
		}
		if cfg.wrapFaults != nil {
			r.inj = cfg.wrapFaults(r.inj)
		}
		r.inj = surfacing{Injector: r.inj, surfaced: &r.surfaced}
	}
	switch cfg.Backend {
	case BackendModel, BackendOS, BackendCrashFS:
	default:
		return nil, fmt.Errorf("sim: unknown backend %q", cfg.Backend)
	}
	if cfg.Open != nil && (cfg.Backend == BackendCrashFS || cfg.Faults != "") {
		return nil, fmt.Errorf("sim: an opened implementation runs on the os backend without faults")
	}
	switch cfg.Format {
	case spec.FormatUnknown, spec.FormatV3:
	case spec.FormatV2:
		if err := r.setV2(); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
	default:
		return nil, fmt.Errorf("sim: no lockstep world writes format %v", cfg.Format)
	}
	r.st = model.Init(r.bounds)
	return r, nil
}

// Close releases the real cache instances.
func (r *Runner) Close() {
	if r.real != nil {
		r.real.close()
	}
}

// Design is the design the runner steps.
func (r *Runner) Design() model.Design { return r.design }

// Bounds are the model's bounds of the run.
func (r *Runner) Bounds() model.Bounds { return r.bounds }

// State is the model's current state.
func (r *Runner) State() model.State { return r.st }

// partial reports whether only safety is compared: an injected fault
// reached the cache, or moved the cut of a crash inside a commit (a flush
// swallowed by a lie never reaches crashfs, so the cut falls later than
// the model's), and the model, which knows nothing of faults, no longer
// predicts placements, writes or the file. Until then a run with faults
// is held to the model in full: lying flushes alone fail it where a power
// loss then loses a commit that returned (G2).
func (r *Runner) partial() bool { return r.inj != nil && r.surfaced }

// lockstep reports whether the real cache runs alongside the model.
func (r *Runner) lockstep() bool {
	return r.cfg.Backend != BackendModel && (r.design.Name == "reference" || r.onCompute() || r.v2)
}

// onCompute reports whether the run holds the cache under
// cache.VerifyOnCompute to the design on-compute: the reference, with the
// check at the first compute after finalize and the re-pack there.
func (r *Runner) onCompute() bool {
	return r.design.CheckAtCompute && len(r.design.Expect) == 0
}

func (r *Runner) begin() error {
	if r.started {
		return nil
	}
	r.started = true
	r.st = model.Init(r.bounds)
	if !r.lockstep() {
		return nil
	}
	open := r.cfg.Open
	if open == nil {
		// OpenGoWith runs no prefault goroutine.
		opts := cache.Options{VerifyData: r.cfg.VerifyData}
		if opts.VerifyData == cache.VerifyDefault {
			opts.VerifyData = cache.VerifyOnFirstUse
		}
		if r.onCompute() {
			opts.VerifyData = cache.VerifyOnCompute
		}
		if r.v2 {
			opts = v2Options(opts)
		}
		open = OpenGoWith(opts)
	}
	w, err := newWorld(r.cfg.Backend, r.cfg.Dir, r.inj, open)
	if err != nil {
		return err
	}
	w.v2 = r.v2
	w.handleOnly = r.onCompute()
	r.real = w
	return nil
}

// Exec runs one directive (its text as a scenario line) and returns its
// output. The error is a *DivergenceError, a *ViolationError, a
// *HarnessError or an error of the backend; output produced before it is
// returned too.
func (r *Runner) Exec(line string) (string, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return "", &HarnessError{Line: line, Msg: "empty directive"}
	}
	if name, ok := strings.CutPrefix(fields[0], "design="); ok && len(fields) == 1 {
		// The short form a file may open with: design=NAME.
		return r.execDesign(line, []string{"name=" + name})
	}
	if h, ok := harnessDirectives[fields[0]]; ok {
		return h(r, line, fields[1:])
	}
	op, err := spec.ParseOp(normalize(fields))
	if err != nil {
		return "", &HarnessError{Line: line, Msg: err.Error()}
	}
	return r.Step(op)
}

// harnessDirectives are the directives that are not lifecycle ops: they
// set up the run or print its state.
var harnessDirectives = map[string]func(r *Runner, line string, args []string) (string, error){
	"design": func(r *Runner, line string, args []string) (string, error) { return r.execDesign(line, args) },
	"bounds": func(r *Runner, line string, args []string) (string, error) { return r.execBounds(line, args) },
	"format": func(r *Runner, line string, args []string) (string, error) { return r.execFormat(line, args) },
	"state":  func(r *Runner, _ string, _ []string) (string, error) { return r.execState() },
	"file":   func(r *Runner, line string, _ []string) (string, error) { return r.execFile(line) },
	"stats":  func(r *Runner, line string, args []string) (string, error) { return r.execStats(line, args) },
}

// Verbs lists every verb a directive may start with: the harness's, the
// spec's ops and their aliases.
func Verbs() []string {
	vs := slices.Collect(maps.Keys(harnessDirectives))
	vs = append(vs, slices.Collect(maps.Keys(aliases))...)
	for _, k := range spec.OpKinds() {
		vs = append(vs, k.String())
	}
	slices.Sort(vs)
	return vs
}

// CheckDirective reports whether line is a directive Exec would accept the
// form of: a known verb, and for a lifecycle op arguments that parse. It
// runs nothing; a directive that passes may still be misused in the state
// a run reaches.
func CheckDirective(line string) error {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return &HarnessError{Line: line, Msg: "empty directive"}
	}
	if _, ok := harnessDirectives[fields[0]]; ok || strings.HasPrefix(fields[0], "design=") && len(fields) == 1 {
		return nil
	}
	_, err := ParseOpLine(line)
	return err
}

// aliases are the verbs the scenario language accepts besides the spec's.
var aliases = map[string]string{
	"delete":          "unload",
	"kernel-upgrade":  "upgrade-kernel",
	"source-change":   "change-source",
	"foreign-process": "foreign",
	"corrupt-file":    "foreign",
}

// ParseOpLine parses a lifecycle directive as Exec does, aliases included.
func ParseOpLine(line string) (spec.Op, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return spec.Op{}, &HarnessError{Line: line, Msg: "empty directive"}
	}
	return spec.ParseOp(normalize(fields))
}

func normalize(fields []string) string {
	if a, ok := aliases[fields[0]]; ok {
		fields = append([]string{a}, fields[1:]...)
	}
	return strings.Join(fields, " ")
}

const msgNotEnabled = "not enabled in this state of the model"

// procState says what state process p is in, for the message of an op the
// model does not enable there: the phase decides most of them (a look-up
// outside a program, an init while another is being packed).
func procState(st *model.State, p spec.Proc) string {
	if int(p) >= len(st.Procs) {
		return fmt.Sprintf("there is no process %s", p)
	}
	pr := &st.Procs[p]
	var loaded []string
	for prog := range spec.MaxPrograms {
		if pr.Loaded&(1<<prog) != 0 {
			loaded = append(loaded, spec.Program(prog).String())
		}
	}
	progs := "no program initialized"
	if len(loaded) > 0 {
		progs = "programs " + strings.Join(loaded, ",") + " initialized"
	}
	switch pr.Phase {
	case spec.PhaseNoInstance:
		return fmt.Sprintf("process %s has no cache instance (not started, or crashed and not restarted)", p)
	case spec.PhasePacking:
		return fmt.Sprintf("process %s is packing %s (%s)", p, pr.Prog, progs)
	}
	return fmt.Sprintf("process %s is idle: no program being packed (%s)", p, progs)
}

// Step performs one lifecycle op in the model and, in lockstep, on the
// cache, and compares their observable results.
func (r *Runner) Step(op spec.Op) (string, error) {
	r.last = op
	if err := r.begin(); err != nil {
		return "", err
	}
	outs := model.Step(&r.design, r.bounds, r.st, op)
	switch {
	case len(outs) == 0:
		return "", &HarnessError{Op: op, Msg: msgNotEnabled + ": " + procState(&r.st, op.Proc)}
	case len(outs) > 1:
		var bs []string
		for _, o := range outs {
			bs = append(bs, o.Op.Branch.String())
		}
		return "", &HarnessError{Op: op, Msg: "several outcomes; name one with branch=" + strings.Join(bs, "|")}
	}
	r.steps++
	out := outs[0]
	prev := r.st

	var got spec.Result
	var perr, cerr error
	var shrunk, twice string
	var tailOpen bool
	if r.real != nil {
		r.real.step = r.steps
		holder := int(prev.Disk.Lock) - 1
		if r.inj != nil && out.Op.Kind == spec.EvCrash && out.Op.Branch == spec.BranchMidSave {
			r.surfaced = true
		}
		before := r.real.compactions(out.Op.Proc)
		live := r.real.liveInfo()
		tailOpen = r.v2 && commits(out.Op.Kind) && r.real.v2TailOpen()
		got, perr = r.real.perform(out.Op, holder)
		if r.real.keptLoad {
			got.Load = out.Result.Load // no loader ran: judged by what the view holds
		}
		shrunk = r.real.shrunkInPlace(live)
		if perr == nil && model.TakesProc(out.Op) {
			twice, perr = r.real.mappedTwice(out.Op.Proc)
			if perr == nil {
				perr = r.real.faulted()
			}
		}
		if commits(out.Op.Kind) {
			out, cerr = r.matchCompaction(prev, out, r.real.compactions(out.Op.Proc) > before)
		}
	}
	r.st = out.Next
	r.performed = append(r.performed, out.Op)
	r.observed = got
	if r.real != nil {
		r.results = append(r.results, got)
	}

	var b strings.Builder
	b.WriteString(DescribeResult(out.Op, out.Result))
	if ev := DescribeEvents(out.Events); ev != "" {
		b.WriteString("\nevents: " + ev)
	}
	viol := model.Check(r.bounds, model.Transition{Prev: &prev, Out: &out})
	for _, id := range viol {
		inv, _ := spec.InvariantByID(id)
		fmt.Fprintf(&b, "\nviolates %s (%s)", id, inv.Guarantee)
	}
	text := b.String()
	r.last = out.Op

	var err error
	if len(viol) > 0 && (r.design.Name == "reference" || r.cfg.AnyViolation) {
		err = &ViolationError{Step: r.steps, Op: out.Op.String(), Invariants: viol}
	}
	if r.real != nil {
		// With faults the model cannot know whether the file holds what a
		// foreign writer would scribble on; a scribble with no target is
		// skipped.
		if perr != nil && !(r.inj != nil && out.Op.Kind == spec.EvForeign && errors.Is(perr, ErrHarness)) {
			return text, perr
		}
		if cerr != nil && err == nil {
			err = cerr
		}
		held := out
		if r.v2 {
			held.Result = r.v2Want(&out, got, tailOpen)
		}
		// The result, the truncation in place and the file are all
		// checked at every step: a result that differs does not hide what
		// the step did to the file (the first is the divergence, the
		// others go with it).
		var found []*DivergenceError
		if d := r.compare(held, got); d != nil {
			found = append(found, d)
		}
		if shrunk != "" {
			found = append(found, &DivergenceError{Step: r.steps, Op: out.Op.String(), What: "truncation",
				Model: "the live file is never truncated in place (I8: other processes may map the bytes cut)", Cache: shrunk})
		}
		if !r.partial() && !r.cfg.OpaqueFile && (out.Result.Wrote || got.Wrote || r.cfg.FileEachStep || r.v2 || out.Op.Kind.IsEvent()) {
			// A write, or an event that may change the disk (a power
			// loss), is held to the model at once: the committed index
			// must be the model's, not only the next result that reads it.
			// v2, whose file may end without a footer, after every step.
			if want, ok := r.wantFile(); ok {
				if have := r.real.describeFile(r.bounds); want != have {
					found = append(found, &DivergenceError{Step: r.steps, Op: out.Op.String(), What: "file", Model: want, Cache: have})
				}
			}
		}
		if twice != "" {
			found = append(found, &DivergenceError{Step: r.steps, Op: out.Op.String(), What: "mappings",
				Model: "each copy of packed bytes is mapped once in a process (I7)", Cache: twice})
		}
		var derr *DivergenceError
		if len(found) > 0 {
			derr = found[0]
			derr.Also = found[1:]
		}
		if derr == nil && !r.partial() && r.cfg.Open == nil {
			derr = r.compareInstances(out.Op)
		}
		if derr == nil && !r.partial() && !r.v2 && (got.Wrote || out.Op.Kind == spec.OpInit) && model.TakesProc(out.Op) && r.st.Disk.Lock == 0 {
			// With a writer's session open the file grows by reservations
			// its next commit accounts for; no instance has a view of it.
			if want, have, ok := r.real.checkGarbage(int(out.Op.Proc)); !ok {
				derr = &DivergenceError{Step: r.steps, Op: out.Op.String(), What: "garbage", Model: want, Cache: have}
			}
		}
		if derr != nil && err == nil {
			err = r.classify(&prev, &out, got, derr)
		}
	}
	r.trace(out, text)
	return text, err
}

// wantFile is the file the model's disk is, as the cache's format writes
// it; ok is false when the format shows it nowhere (v2File).
func (r *Runner) wantFile() (string, bool) {
	if r.v2 {
		return v2File(r.bounds, &r.st)
	}
	return DescribeDisk(r.bounds, r.st.Disk), true
}

// compare holds the cache's result to the model's. With faults injected
// only safety is compared.
func (r *Runner) compare(out model.Outcome, got spec.Result) *DivergenceError {
	want := out.Result
	want.Bytes.LateCorrupt = false // a property of history, not of the bytes
	if !want.Hit && out.Op.Kind != spec.OpCompute || out.Op.Kind == spec.OpLookUp && r.real.handleOnly {
		// No bytes: a miss, or (on-compute) a handle whose bytes the
		// compute reads.
		want.Bytes = spec.Packing{}
	}
	if r.partial() {
		// An explicit save may fail when the failure is recorded (I12).
		bad := got.Failed && !r.real.recorded
		if got.Hit && out.Op.Kind == spec.OpLookUp && !r.real.handleOnly {
			w := r.real.procs[out.Op.Proc].want(int(out.Op.Name))
			// Bytes changed after this instance checked them are allowed
			// (I2). Without faults the model says exactly when; with them
			// it cannot know who holds what (a failed load sends one
			// process to the heap and lets another take the lock; a failed
			// commit leaves entries on the file a foreign write reaches),
			// so the harness's own record of what this instance packed or
			// checked stands in. It is weaker: a cache that dropped such
			// an entry and served an unchecked reload would pass here, and
			// is left to the runs without faults.
			late := (out.Result.Hit && out.Result.Bytes.LateCorrupt) || r.real.procs[out.Op.Proc].checked[out.Op.Name]
			bad = bad || got.Bytes.Kernel != w.Kernel || got.Bytes.Source != w.Source || (!got.Bytes.Intact && !late)
		}
		if out.Op.Kind == spec.OpCompute && got.Bytes != (spec.Packing{}) {
			// What an inference computed from: the process's packing,
			// intact unless changed after this instance packed or checked
			// it (I2, I13), as for a hit above.
			w := r.real.procs[out.Op.Proc].want(int(out.Op.Name))
			late := out.Result.Bytes.LateCorrupt || r.real.procs[out.Op.Proc].checked[out.Op.Name]
			bad = bad || got.Bytes.Kernel != w.Kernel || got.Bytes.Source != w.Source || (!got.Bytes.Intact && !late)
		}
		if !bad {
			return nil
		}
		want = spec.Result{Hit: got.Hit, Bytes: r.real.procs[out.Op.Proc].want(int(out.Op.Name))}
		if !got.Hit && out.Op.Kind != spec.OpCompute {
			want.Bytes = spec.Packing{}
		}
	}
	if r.cfg.Unchecked {
		got.Checked = want.Checked
	}
	if got == want {
		return nil
	}
	c := DescribeResult(out.Op, got)
	if r.real.note != "" {
		c += " (" + r.real.note + ")"
	}
	return &DivergenceError{Step: r.steps, Op: out.Op.String(), What: "result",
		Model: DescribeResult(out.Op, want), Cache: c}
}

// compareInstances holds every open instance of the in-process cache to
// the model after every step: the instance indexes exactly the model's
// present, non-retired entries, and an insert lands on the heap exactly
// when the model's entry does (an implementation behind the protocol
// lists neither, so only the in-process cache is held to them).
func (r *Runner) compareInstances(op spec.Op) *DivergenceError {
	if op.Kind == spec.OpInsert {
		want := r.st.Procs[op.Proc].Ents[op.Name].Status == spec.EntryHeap
		if want != r.real.toHeap {
			say := map[bool]string{false: "file", true: "heap"}
			return &DivergenceError{Step: r.steps, Op: op.String(), What: "insert placement", Model: say[want], Cache: say[r.real.toHeap]}
		}
	}
	for p := 0; p < r.bounds.Procs; p++ {
		pr := &r.st.Procs[p]
		c := r.real.procs[p].c
		if (pr.Phase != spec.PhaseNoInstance) != (c != nil) {
			return &DivergenceError{Step: r.steps, Op: r.last.String(), What: "instances",
				Model: describeModelProc(r.bounds, p, pr), Cache: r.real.describeProc(p)}
		}
		if c == nil {
			continue
		}
		var want, have []string
		for n := 0; n < r.bounds.Names; n++ {
			if e := pr.Ents[n]; e.Rec.Present() && !e.Retired {
				want = append(want, spec.Name(n).String())
			}
		}
		for _, s := range c.Names() {
			have = append(have, nameOf(s))
		}
		sort.Strings(have)
		if !slices.Equal(want, have) {
			return &DivergenceError{Step: r.steps, Op: r.last.String(), What: "names",
				Model: strings.Join(want, " "), Cache: strings.Join(have, " ")}
		}
	}
	return nil
}

// classify turns a divergence into a *KnownDivergenceError when it
// matches one of KnownDivergences.
func (r *Runner) classify(prev *model.State, out *model.Outcome, got spec.Result, derr *DivergenceError) error {
	k := knownCase{op: out.Op, prev: prev, out: out, got: got,
		modelDisk: DescribeDisk(r.bounds, r.st.Disk), cacheDisk: r.real.describeFile(r.bounds)}
	if kd, ok := matchKnown(r.known, k); ok {
		return &KnownDivergenceError{ID: kd.ID, Step: derr.Step, Op: derr.Op, Diff: derr}
	}
	return derr
}

func (r *Runner) trace(out model.Outcome, text string) {
	w := r.cfg.Trace
	if w == nil {
		return
	}
	fmt.Fprintf(w, "step %d: %s\n", r.steps, out.Op)
	for _, l := range strings.Split(text, "\n") {
		fmt.Fprintf(w, "    %s\n", l)
	}
	fmt.Fprintf(w, "  model: file %s", DescribeDisk(r.bounds, r.st.Disk))
	if r.st.Disk.Lock != 0 {
		fmt.Fprintf(w, ", writer lock held by %s", spec.Proc(r.st.Disk.Lock-1))
	}
	fmt.Fprintln(w)
	for p := 0; p < r.bounds.Procs; p++ {
		fmt.Fprintf(w, "         %s\n", describeModelProc(r.bounds, p, &r.st.Procs[p]))
	}
	if r.real != nil {
		fmt.Fprintf(w, "  cache: file %s\n", r.real.describeFile(r.bounds))
		for p := 0; p < r.bounds.Procs; p++ {
			fmt.Fprintf(w, "         %s\n", r.real.describeProc(p))
		}
	}
}

func argValue(args []string, key string) (string, bool) {
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

func describeModelProc(b model.Bounds, p int, pr *model.Proc) string {
	phase := [...]string{"no-instance", "idle", "packing"}[pr.Phase]
	s := fmt.Sprintf("%s: %s kernel=%d", spec.Proc(p), phase, pr.Kernel)
	if pr.Phase == spec.PhasePacking {
		s += " program=" + pr.Prog.String()
	}
	var ents []string
	for n := 0; n < b.Names; n++ {
		e := pr.Ents[n]
		if !e.Rec.Present() {
			continue
		}
		st := [...]string{"absent", "loaded", "appended", "committed", "heap"}[e.Status]
		x := fmt.Sprintf("%s=%s/%s", spec.Name(n), e.Rec.Content(), st)
		if e.Retired {
			x += "/retired"
		}
		ents = append(ents, x)
	}
	if len(ents) > 0 {
		s += " entries: " + strings.Join(ents, " ")
	}
	return s
}

// isNotExist reports a missing file through any wrapping.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
