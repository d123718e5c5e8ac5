package sim

import (
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
