package kernels_test

import (
	"fmt"
	"unsafe"

	"github.com/xpwc/xpwc/kernels"
)

// Pack a 3×2 weight once, then compute y = x·Wᵀ + b from the packed bytes,
// as a backend does after a cache miss.
func Example() {
	k := kernels.NewRegistry().Default()
	w := []float32{1, 2, 3, 4, 5, 6} // N=3 output channels × K=2, row-major
	b := []float32{0.5, 0.5, 0.5}

	// The cache hands out 64-byte aligned bytes; a []float32 backing array
	// gives the 4-byte alignment Pack and Compute need.
	buf := make([]float32, (k.PackedSize(3, 2)+3)/4)
	packed := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), k.PackedSize(3, 2))
	if err := k.Pack(packed, 3, 2, w, b); err != nil {
		panic(err)
	}
	y := make([]float32, 3)
	if err := k.Compute(y, []float32{1, 1}, 1, packed, 3, 2); err != nil {
		panic(err)
	}
	fmt.Println(k.Name(), k.PackedSize(3, 2), y)
	// Output: f32-goi-nr16 192 [3.5 7.5 11.5]
}
