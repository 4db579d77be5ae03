//go:build !purego

package engine

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasVec reports whether the serial kernels run in assembly: AVX2 and FMA
// (with the OS saving the YMM registers, which x/sys/cpu checks).
var hasVec = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// Each kernel below runs the assembly over whole groups of eight and its
// Go twin (kernels_vec.go) over the rest, or everything without AVX2.

func swigluVec(gate, up []float32) {
	n8 := len(gate) &^ 7
	if !hasVec || n8 == 0 {
		swigluGo(gate, up)
		return
	}
	up = up[:len(gate)]
	swigluAsm(unsafe.Pointer(&gate[0]), unsafe.Pointer(&up[0]), n8)
	swigluGo(gate[n8:], up[n8:])
}

func scaleMax(x []float32, scale float32) float32 {
	n8 := len(x) &^ 7
	if !hasVec || n8 == 0 {
		return scaleMaxGo(x, scale)
	}
	mx := scaleMaxAsm(unsafe.Pointer(&x[0]), n8, scale)
	if n8 < len(x) {
		mx = max(mx, scaleMaxGo(x[n8:], scale))
	}
	return mx
}

func expSum(x []float32, mx float32) float32 {
	n8 := len(x) &^ 7
	if !hasVec || n8 == 0 {
		return expSumGo(x, mx)
	}
	s := expSumAsm(unsafe.Pointer(&x[0]), n8, mx)
	if n8 < len(x) {
		s += expSumGo(x[n8:], mx)
	}
	return s
}

func scaleVec(x []float32, a float32) {
	n8 := len(x) &^ 7
	if !hasVec || n8 == 0 {
		scaleGo(x, a)
		return
	}
	scaleAsm(unsafe.Pointer(&x[0]), n8, a)
	scaleGo(x[n8:], a)
}

func sumSquares(x []float32) float64 {
	n8 := len(x) &^ 7
	if !hasVec || n8 == 0 {
		return sumSquaresGo(x)
	}
	s := sumSquaresAsm(unsafe.Pointer(&x[0]), n8)
	if n8 < len(x) {
		s += sumSquaresGo(x[n8:])
	}
	return s
}

func scaleMul(dst, x, w []float32, scale float32) {
	n8 := len(dst) &^ 7
	if !hasVec || n8 == 0 {
		scaleMulGo(dst, x, w, scale)
		return
	}
	x, w = x[:len(dst)], w[:len(dst)]
	scaleMulAsm(unsafe.Pointer(&dst[0]), unsafe.Pointer(&x[0]), unsafe.Pointer(&w[0]), n8, scale)
	scaleMulGo(dst[n8:], x[n8:], w[n8:], scale)
}

// The assembly (kernels_amd64.s); n is a positive multiple of 8.

//go:noescape
func swigluAsm(gate, up unsafe.Pointer, n int)

//go:noescape
func scaleMaxAsm(x unsafe.Pointer, n int, scale float32) float32

//go:noescape
func expSumAsm(x unsafe.Pointer, n int, mx float32) float32

//go:noescape
func scaleAsm(x unsafe.Pointer, n int, a float32)

//go:noescape
func sumSquaresAsm(x unsafe.Pointer, n int) float64

//go:noescape
func scaleMulAsm(dst, x, w unsafe.Pointer, n int, scale float32)
