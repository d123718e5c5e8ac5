package sim

import (
	"fmt"
	"strings"

	"github.com/xpwc/xpwc/spec"
)

func (r *Runner) execState() (string, error) {
	if err := r.begin(); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "env: kernel=%d", r.st.Env.Kernel)
	for n := 0; n < r.bounds.Names; n++ {
		fmt.Fprintf(&b, " %s.src=%d", spec.Name(n), r.st.Env.Src[n])
	}
	fmt.Fprintf(&b, "\nfile: %s", DescribeDisk(r.bounds, r.st.Disk))
	if r.st.Disk.Lock != 0 {
		fmt.Fprintf(&b, " lock=%s", spec.Proc(r.st.Disk.Lock-1))
	}
	for p := 0; p < r.bounds.Procs; p++ {
		fmt.Fprintf(&b, "\n%s", describeModelProc(r.bounds, p, &r.st.Procs[p]))
		if r.real != nil {
			fmt.Fprintf(&b, "\n  cache: %s", r.real.describeProc(p))
		}
	}
	return b.String(), nil
}

func (r *Runner) execFile(line string) (string, error) {
	if err := r.begin(); err != nil {
		return "", err
	}
	want := DescribeDisk(r.bounds, r.st.Disk)
	if r.real == nil || r.cfg.OpaqueFile || r.partial() {
		return want, nil
	}
	cmp, ok := r.wantFile()
	if got := r.real.describeFile(r.bounds); ok && got != cmp {
		return want, &DivergenceError{Step: r.steps, Op: line, What: "file", Model: cmp, Cache: got}
	}
	return want, nil
}

func (r *Runner) execStats(line string, args []string) (string, error) {
	if err := r.begin(); err != nil {
		return "", err
	}
	if r.real == nil {
		return "", &HarnessError{Line: line, Msg: "stats reads the real cache; this run is model only"}
	}
	v, ok := argValue(args, "proc")
	o, err := spec.ParseOp("destroy proc=" + v)
	if !ok || len(args) != 1 || err != nil || int(o.Proc) >= r.bounds.Procs {
		return "", &HarnessError{Line: line, Msg: "want stats proc=A|B"}
	}
	return r.real.describeStats(int(o.Proc)), nil
}
