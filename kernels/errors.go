package kernels

import (
	"errors"
	"fmt"
)

var (
	// ErrShape is returned when a dimension is not positive, a product of
	// dimensions overflows, or a slice's length does not match the shape.
	ErrShape = errors.New("kernels: bad shape")
	// ErrBufferTooSmall is returned when a packed buffer is shorter than
	// PackedSize for the shape it is said to hold.
	ErrBufferTooSmall = errors.New("kernels: buffer too small")
	// ErrMisaligned is returned when a packed buffer does not start on a
	// 4-byte boundary, so floats cannot be read from it in place.
	ErrMisaligned = errors.New("kernels: misaligned packed buffer")
	// ErrNonFinite is returned by quantizing packers when a weight is NaN or
	// infinite: no per-channel scale can represent it.
	ErrNonFinite = errors.New("kernels: non-finite weight")
)

// ShapeError says which argument of which operation was wrong. It unwraps
// to one of the sentinels above, so callers match with errors.Is.
type ShapeError struct {
	Kernel string // kernel name
	Op     string // "pack" or "compute"
	Field  string // argument at fault, e.g. "n", "len(w)", "packed"
	Got    int    // the value given
	Want   int    // the value required (a minimum for lengths), or 0
	Err    error  // sentinel
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("%s %s: %s = %d (want %d): %v", e.Kernel, e.Op, e.Field, e.Got, e.Want, e.Err)
}

func (e *ShapeError) Unwrap() error { return e.Err }
