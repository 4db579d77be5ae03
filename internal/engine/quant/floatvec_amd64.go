//go:build !purego

package quant

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasF16C reports whether the float vector kernels may run in assembly:
// the AVX2 kernels' features plus F16C for the binary16 conversions.
var hasF16C = hasAVX2 && cpu.X86.HasF16C

// The float vector kernels: AVX2, FMA and F16C where the CPU has them,
// pure Go otherwise (the wrappers over the assembly are floatvec_simd.go's).
var (
	dotF32Impl  = pickFloat(dotF32Vec, dotF32Plain)
	dotF16Impl  = pickFloat(dotF16Vec, dotF16Plain)
	axpyF32Impl = pickFloat(axpyF32Vec, axpyF32Go)
	axpyF16Impl = pickFloat(axpyF16Vec, axpyF16Go)
	toF16Impl   = pickFloat(toF16Vec, toF16Go)

	scoresImpl         = pickFloat(scoresAVX, scoresPlain)
	scoresF16Impl      = pickFloat(scoresF16AVX, scoresF16Plain)
	weightedSumImpl    = pickFloat(weightedSumAVX, weightedSumPlain)
	weightedSumF16Impl = pickFloat(weightedSumF16AVX, weightedSumF16Plain)

	// the F32 and F16 weight kernels' Dot
	dotF32WImpl = pickFloat(dotF32WVec, dotF32)
	dotF16WImpl = pickFloat(dotF16WVec, dotF16)
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

// The attention kernels (floatvec_amd64.s): hd is a positive multiple of 8, rows ≥ 1,
// strideBytes the distance between cached rows.

//go:noescape
func scoresAsm(dst unsafe.Pointer, rows int, q unsafe.Pointer, hd int, k unsafe.Pointer, strideBytes int)

//go:noescape
func scoresF16Asm(dst unsafe.Pointer, rows int, q unsafe.Pointer, hd int, k unsafe.Pointer, strideBytes int)

//go:noescape
func weightedSumAsm(out unsafe.Pointer, hd int, w unsafe.Pointer, rows int, v unsafe.Pointer, strideBytes int)

//go:noescape
func weightedSumF16Asm(out unsafe.Pointer, hd int, w unsafe.Pointer, rows int, v unsafe.Pointer, strideBytes int)
