//go:build (amd64 || arm64) && !purego

package quant

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The float vector kernels over the assembly of either architecture
// (AVX2/FMA/F16C on amd64, NEON on arm64), which covers whole groups of
// eight elements; the wrappers finish the rest as the Go twins do.

// dotF32Vec is DotF32 over the assembly.
func dotF32Vec(a, b []float32) float32 {
	n := len(a)
	n8 := n &^ 7
	if n8 == 0 {
		return dotF32Go(a, b)
	}
	s := dotF32Asm(unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), n8)
	for i := n8; i < n; i++ {
		s = fma32(a[i], b[i], s)
	}
	return s
}

// dotF16Vec is DotF16 over the assembly.
func dotF16Vec(a []float32, b []uint16) float32 {
	n := len(a)
	n8 := n &^ 7
	if n8 == 0 {
		return dotF16Go(a, b)
	}
	s := dotF16Asm(unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), n8)
	for i := n8; i < n; i++ {
		s = fma32(a[i], f16Table[b[i]], s)
	}
	return s
}

// dotF32WVec is the F32 kernel's Dot: x against little-endian float32
// weights in bytes, as dotF32Vec sums.
func dotF32WVec(x []float32, w []byte) float32 {
	n := len(x)
	w = w[:4*n]
	if n == 0 {
		return 0
	}
	n8 := n &^ 7
	var s float32
	if n8 > 0 {
		s = dotF32Asm(unsafe.Pointer(&x[0]), unsafe.Pointer(&w[0]), n8)
	}
	for i := n8; i < n; i++ {
		s = fma32(x[i], math.Float32frombits(binary.LittleEndian.Uint32(w[4*i:])), s)
	}
	return s
}

// dotF16WVec is the F16 kernel's Dot: x against binary16 weights in
// bytes, as dotF16Vec sums.
func dotF16WVec(x []float32, w []byte) float32 {
	n := len(x)
	w = w[:2*n]
	if n == 0 {
		return 0
	}
	n8 := n &^ 7
	var s float32
	if n8 > 0 {
		s = dotF16Asm(unsafe.Pointer(&x[0]), unsafe.Pointer(&w[0]), n8)
	}
	for i := n8; i < n; i++ {
		s = fma32(x[i], f16Table[binary.LittleEndian.Uint16(w[2*i:])], s)
	}
	return s
}

// axpyF32Vec is AxpyF32 over the assembly.
func axpyF32Vec(y []float32, a float32, x []float32) {
	n8 := len(y) &^ 7
	if n8 > 0 {
		axpyF32Asm(unsafe.Pointer(&y[0]), a, unsafe.Pointer(&x[0]), n8)
	}
	axpyF32Go(y[n8:], a, x[n8:])
}

// axpyF16Vec is AxpyF16 over the assembly.
func axpyF16Vec(y []float32, a float32, x []uint16) {
	n8 := len(y) &^ 7
	if n8 > 0 {
		axpyF16Asm(unsafe.Pointer(&y[0]), a, unsafe.Pointer(&x[0]), n8)
	}
	axpyF16Go(y[n8:], a, x[n8:])
}

// toF16Vec is ToF16 over the assembly.
func toF16Vec(dst []uint16, src []float32) {
	n8 := len(src) &^ 7
	if n8 > 0 {
		toF16Asm(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n8)
	}
	toF16Go(dst[n8:], src[n8:])
}

// The assembly (floatvec_amd64.s, floatvec_arm64.s); n is a positive
// multiple of 8.

//go:noescape
func dotF32Asm(a, b unsafe.Pointer, n int) float32

//go:noescape
func dotF16Asm(a, b unsafe.Pointer, n int) float32

//go:noescape
func axpyF32Asm(y unsafe.Pointer, a float32, x unsafe.Pointer, n int)

//go:noescape
func axpyF16Asm(y unsafe.Pointer, a float32, x unsafe.Pointer, n int)

//go:noescape
func toF16Asm(dst, src unsafe.Pointer, n int)
