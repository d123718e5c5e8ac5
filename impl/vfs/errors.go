package vfs

import "errors"

// errClosedMapping is returned by Mapping methods after Close: the memory is
// gone, and msync or mprotect on it would act on whatever is mapped there now.
var errClosedMapping = errors.New("vfs: mapping is closed")
