//go:build !purego

package quant

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The float vector kernels on arm64: NEON (floatvec_arm64.s), which every
// arm64 CPU has, binary16 included (FCVTL and FCVTN are ARMv8.0). The
// dot products keep the eight-lane, four-accumulator order of the Go
// twins in pairs of four-lane registers. The assembly covers whole groups
// of eight elements; the wrappers finish the rest as the Go twins do.
var (
	dotF32Impl  = dotF32NEON
	dotF16Impl  = dotF16NEON
	axpyF32Impl = axpyF32NEON
	axpyF16Impl = axpyF16NEON
	toF16Impl   = toF16NEON

	// attention: one NEON dot or axpy per cached position
	scoresImpl         = scoresNEON
	scoresF16Impl      = scoresF16NEON
	weightedSumImpl    = weightedSumNEON
	weightedSumF16Impl = weightedSumF16NEON

	// the F32 and F16 weight kernels' Dot
	dotF32WImpl = dotF32WNEON
	dotF16WImpl = dotF16WNEON
)

// hasFloatKernels reports whether the float weight kernels' Dot sums as
// DotF32 and DotF16 do (with the assembly).
const hasFloatKernels = true

func dotF32NEON(a, b []float32) float32 {
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

func dotF16NEON(a []float32, b []uint16) float32 {
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

// dotF32WNEON is the F32 kernel's Dot: x against little-endian float32
// weights in bytes, summed as dotF32NEON sums.
func dotF32WNEON(x []float32, w []byte) float32 {
	n := len(x)
	w = w[:4*n]
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

// dotF16WNEON is the F16 kernel's Dot: x against binary16 weights in
// bytes, summed as dotF16NEON sums.
func dotF16WNEON(x []float32, w []byte) float32 {
	n := len(x)
	w = w[:2*n]
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

func axpyF32NEON(y []float32, a float32, x []float32) {
	n8 := len(y) &^ 7
	if n8 > 0 {
		axpyF32Asm(unsafe.Pointer(&y[0]), a, unsafe.Pointer(&x[0]), n8)
	}
	axpyF32Go(y[n8:], a, x[n8:])
}

func axpyF16NEON(y []float32, a float32, x []uint16) {
	n8 := len(y) &^ 7
	if n8 > 0 {
		axpyF16Asm(unsafe.Pointer(&y[0]), a, unsafe.Pointer(&x[0]), n8)
	}
	axpyF16Go(y[n8:], a, x[n8:])
}

func toF16NEON(dst []uint16, src []float32) {
	n8 := len(src) &^ 7
	if n8 > 0 {
		toF16Asm(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n8)
	}
	toF16Go(dst[n8:], src[n8:])
}

// scoresNEON is Scores as one dotF32NEON per key: the dot products sum
// as scoresGo's do.
func scoresNEON(dst, q, k []float32, stride int) {
	for t := range dst {
		dst[t] = dotF32NEON(q, k[t*stride:t*stride+len(q)])
	}
}

// scoresF16NEON is ScoresF16 as one dotF16NEON per key.
func scoresF16NEON(dst, q []float32, k []uint16, stride int) {
	for t := range dst {
		dst[t] = dotF16NEON(q, k[t*stride:t*stride+len(q)])
	}
}

// weightedSumNEON is WeightedSum as one fused axpy per position, in order
// of t, as weightedSumGo takes the terms.
func weightedSumNEON(out, w, v []float32, stride int) {
	for t, a := range w {
		axpyF32NEON(out, a, v[t*stride:t*stride+len(out)])
	}
}

// weightedSumF16NEON is WeightedSumF16 as one fused axpy per position.
func weightedSumF16NEON(out, w []float32, v []uint16, stride int) {
	for t, a := range w {
		axpyF16NEON(out, a, v[t*stride:t*stride+len(out)])
	}
}

// The assembly (floatvec_arm64.s); n is a positive multiple of 8.

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
