package sim

import (
	"errors"
	"regexp"

	"github.com/xpwc/xpwc/faultinject/errorfs"
)

var perPathRandom = regexp.MustCompile(`\(\s*randomly\b`)

// SeededFaults rewrites an errorfs spec so that its random choices follow
// the order of the calls only: every (randomly P SEED ...) becomes
// (randomCalls P SEED ...). randomly keeps one generator per path, and the
// cache names its temporary files (a replacement, a compaction) with a
// random suffix, so the same seed injected different faults on every
// invocation and a failing fault run could not be replayed. The sim runs
// one op at a time, so the call order, and with it every choice, is a
// function of the op sequence and the seed.
func SeededFaults(spec string) (string, error) {
	out := perPathRandom.ReplaceAllString(spec, "(randomCalls")
	if _, err := errorfs.Parse(out); err != nil {
		return "", err
	}
	return out, nil
}

// surfacing observes an injector for the runner: it records an injected
// error that reaches the cache, which is anything but a lie on a flush (a
// flush that reports success and flushes nothing). Until one does, the
// cache saw no failure and is held to the model in full; a lying flush
// changes only what a power loss keeps, which the model decides (G2).
type surfacing struct {
	errorfs.Injector
	surfaced *bool
}

func (s surfacing) MaybeError(op errorfs.Op) error {
	err := s.Injector.MaybeError(op)
	var lie *errorfs.LieError
	flush := op.Kind == errorfs.OpSync || op.Kind == errorfs.OpSyncData || op.Kind == errorfs.OpSyncDir || op.Kind == errorfs.OpMapSync
	if err != nil && !(flush && errors.As(err, &lie)) {
		*s.surfaced = true
	}
	return err
}
