package main

import (
	"errors"
	"os"

	"github.com/xpwc/xpwc/model/explore"
)

// osTemp makes the explorer's temporary files (--fingerprints) in dir, ""
// for the system's temporary directory. Each is unlinked as soon as it is
// made where the system allows it, so a run that is killed leaves nothing
// behind; elsewhere it is removed when closed.
type osTemp struct{ dir string }

func (o osTemp) Create() (explore.TempFile, error) {
	f, err := os.CreateTemp(o.dir, "xpwc-explore-*")
	if err != nil {
		return nil, err
	}
	if os.Remove(f.Name()) == nil {
		return f, nil
	}
	return removeOnClose{f}, nil
}

type removeOnClose struct{ *os.File }

func (f removeOnClose) Close() error {
	return errors.Join(f.File.Close(), os.Remove(f.Name()))
}
