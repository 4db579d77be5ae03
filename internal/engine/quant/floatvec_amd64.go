//go:build !purego

package quant

import (
	"encoding/binary"
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasF16C reports whether the float vector kernels may run in assembly:
// the AVX2 kernels' features plus F16C for the binary16 conversions.
var hasF16C = hasAVX2 && cpu.X86.HasF16C

// The float vector kernels: AVX2, FMA and F16C where the CPU has them,
// pure Go otherwise. The assembly covers whole groups of eight elements;
// the wrappers finish the rest as the Go twins do.
var (
	dotF32Impl  = pickFloat(dotF32AVX, dotF32Plain)
	dotF16Impl  = pickFloat(dotF16AVX, dotF16Plain)
	axpyF32Impl = pickFloat(axpyF32AVX, axpyF32Go)
	axpyF16Impl = pickFloat(axpyF16AVX, axpyF16Go)
	toF16Impl   = pickFloat(toF16AVX, toF16Go)

	scoresImpl         = pickFloat(scoresAVX, scoresPlain)
	scoresF16Impl      = pickFloat(scoresF16AVX, scoresF16Plain)
	weightedSumImpl    = pickFloat(weightedSumAVX, weightedSumPlain)
	weightedSumF16Impl = pickFloat(weightedSumF16AVX, weightedSumF16Plain)

	// the F32 and F16 weight kernels' Dot
	dotF32WImpl = pickFloat(dotF32WAVX, dotF32)
	dotF16WImpl = pickFloat(dotF16WAVX, dotF16)
)

// hasFloatKernels reports whether the float weight kernels' Dot sums as
// DotF32 and DotF16 do (with the assembly).
var hasFloatKernels = hasF16C

func pickFloat[F any](asm, generic F) F {
	if hasF16C {
		return asm
	}
	return generic
}

func dotF32AVX(a, b []float32) float32 {
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

func dotF16AVX(a []float32, b []uint16) float32 {
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

// dotF32WAVX is the F32 kernel's Dot: x against little-endian float32
// weights in bytes, as dotF32AVX sums.
func dotF32WAVX(x []float32, w []byte) float32 {
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

// dotF16WAVX is the F16 kernel's Dot: x against binary16 weights in
// bytes, as dotF16AVX sums.
func dotF16WAVX(x []float32, w []byte) float32 {
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

func axpyF32AVX(y []float32, a float32, x []float32) {
	n8 := len(y) &^ 7
	if n8 > 0 {
		axpyF32Asm(unsafe.Pointer(&y[0]), a, unsafe.Pointer(&x[0]), n8)
	}
	axpyF32Go(y[n8:], a, x[n8:])
}

func axpyF16AVX(y []float32, a float32, x []uint16) {
	n8 := len(y) &^ 7
	if n8 > 0 {
		axpyF16Asm(unsafe.Pointer(&y[0]), a, unsafe.Pointer(&x[0]), n8)
	}
	axpyF16Go(y[n8:], a, x[n8:])
}

func toF16AVX(dst []uint16, src []float32) {
	n8 := len(src) &^ 7
	if n8 > 0 {
		toF16Asm(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n8)
	}
	toF16Go(dst[n8:], src[n8:])
}

// The attention kernels take the assembly when the head size is a
// multiple of 8 (every common one), plain Go otherwise.

func scoresAVX(dst, q, k []float32, stride int) {
	if len(q)&7 != 0 || len(q) == 0 {
		scoresPlain(dst, q, k, stride)
		return
	}
	scoresAsm(unsafe.Pointer(&dst[0]), len(dst), unsafe.Pointer(&q[0]), len(q), unsafe.Pointer(&k[0]), 4*stride)
}

func scoresF16AVX(dst, q []float32, k []uint16, stride int) {
	if len(q)&7 != 0 || len(q) == 0 {
		scoresF16Plain(dst, q, k, stride)
		return
	}
	scoresF16Asm(unsafe.Pointer(&dst[0]), len(dst), unsafe.Pointer(&q[0]), len(q), unsafe.Pointer(&k[0]), 2*stride)
}

func weightedSumAVX(out, w, v []float32, stride int) {
	if len(out)&7 != 0 || len(out) == 0 {
		weightedSumPlain(out, w, v, stride)
		return
	}
	weightedSumAsm(unsafe.Pointer(&out[0]), len(out), unsafe.Pointer(&w[0]), len(w), unsafe.Pointer(&v[0]), 4*stride)
}

func weightedSumF16AVX(out, w []float32, v []uint16, stride int) {
	if len(out)&7 != 0 || len(out) == 0 {
		weightedSumF16Plain(out, w, v, stride)
		return
	}
	weightedSumF16Asm(unsafe.Pointer(&out[0]), len(out), unsafe.Pointer(&w[0]), len(w), unsafe.Pointer(&v[0]), 2*stride)
}

// The assembly (floatvec_amd64.s); n is a positive multiple of 8.

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

// The attention kernels: hd is a positive multiple of 8, rows ≥ 1,
// strideBytes the distance between cached rows.

//go:noescape
func scoresAsm(dst unsafe.Pointer, rows int, q unsafe.Pointer, hd int, k unsafe.Pointer, strideBytes int)

//go:noescape
func scoresF16Asm(dst unsafe.Pointer, rows int, q unsafe.Pointer, hd int, k unsafe.Pointer, strideBytes int)

//go:noescape
func weightedSumAsm(out unsafe.Pointer, hd int, w unsafe.Pointer, rows int, v unsafe.Pointer, strideBytes int)

//go:noescape
func weightedSumF16Asm(out unsafe.Pointer, hd int, w unsafe.Pointer, rows int, v unsafe.Pointer, strideBytes int)
