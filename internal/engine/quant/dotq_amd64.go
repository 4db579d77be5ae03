//go:build !purego

package quant

import "golang.org/x/sys/cpu"

// hasAVX2 reports whether the AVX2 kernels may run: AVX2 and FMA, with the
// OS saving the YMM registers (x/sys/cpu checks that).
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// The integer dot products: AVX2 where the CPU has it, pure Go otherwise.
var (
	dotQ8_0Impl = pick(Q8_0, dotQ8_0Go)
	dotQ4_0Impl = pick(Q4_0, dotQ4_0Go)
	dotQ5_0Impl = pick(Q5_0, dotQ5_0Go)
	dotQ4_1Impl = pick(Q4_1, dotQ4_1Go)
	dotQ5_1Impl = pick(Q5_1, dotQ5_1Go)
	dotQ4_KImpl = pick(Q4_K, dotQ4_KGo)
	dotQ5_KImpl = pick(Q5_K, dotQ5_KGo)
	dotQ6_KImpl = pick(Q6_K, dotQ6_KGo)

	rowsQ8_0Impl = pickRows(Q8_0)
	rowsQ4_0Impl = pickRows(Q4_0)
	rowsQ5_0Impl = pickRows(Q5_0)
	rowsQ4_1Impl = pickRows(Q4_1)
	rowsQ5_1Impl = pickRows(Q5_1)
	rowsQ4_KImpl = pickRows(Q4_K)
	rowsQ5_KImpl = pickRows(Q5_K)
	rowsQ6_KImpl = pickRows(Q6_K)
)

// pick returns the AVX2 DotQ of t, or generic without AVX2.
func pick(t Type, generic func(xq, w []byte) float32) func(xq, w []byte) float32 {
	if !hasAVX2 {
		return generic
	}
	_, act := actLayout(vecDotType[t])
	wb := kernelBytes[t]
	return func(xq, w []byte) float32 {
		var out [1]float32
		avx2Rows(t, act, wb, out[:], xq, w)
		return out[0]
	}
}

// pickRows returns the AVX2 DotQRows of t, or nil (register then loops
// over DotQ).
func pickRows(t Type) func(out []float32, xq, w []byte) {
	if !hasAVX2 {
		return nil
	}
	_, act := actLayout(vecDotType[t])
	wb := kernelBytes[t]
	return func(out []float32, xq, w []byte) { avx2Rows(t, act, wb, out, xq, w) }
}

// simdName names the instruction set the integer dot products use.
var simdName = map[bool]string{true: "avx2", false: "go"}[hasAVX2]

// avx2Rows sets out[r] to the dot product of the activations xq (blocks
// of act bytes) with row r of w, for the len(out) consecutive rows of
// weights of type t (blocks of wb bytes) in w, with one call into the
// assembly.
func avx2Rows(t Type, act, wb int, out []float32, xq, w []byte) {
	nb := len(xq) / act
	if nb == 0 || len(out) == 0 {
		clear(out)
		return
	}
	_ = w[len(out)*nb*wb-1] // every row is there
	x, wp, o, rows := &xq[0], &w[0], &out[0], len(out)
	switch t {
	case Q8_0:
		q8_0RowsAVX2(x, wp, nb, f16Table, o, rows)
	case Q4_0:
		q4_0RowsAVX2(x, wp, nb, f16Table, o, rows)
	case Q5_0:
		q5_0RowsAVX2(x, wp, nb, f16Table, o, rows)
	case Q4_1:
		q4_1RowsAVX2(x, wp, nb, f16Table, o, rows)
	case Q5_1:
		q5_1RowsAVX2(x, wp, nb, f16Table, o, rows)
	case Q4_K:
		q4_KRowsAVX2(x, wp, nb, f16Table, o, rows)
	case Q5_K:
		q5_KRowsAVX2(x, wp, nb, f16Table, o, rows)
	case Q6_K:
		q6_KRowsAVX2(x, wp, nb, f16Table, o, rows)
	default:
		panic("quant: no AVX2 kernel for " + t.String())
	}
}

// vecDotType and kernelBytes give the activation type and block bytes of
// the types with an AVX2 kernel (the kernel table is not filled yet when
// these functions are chosen).
var (
	vecDotType = map[Type]Type{
		Q8_0: Q8_0, Q4_0: Q8_0, Q5_0: Q8_0, Q4_1: Q8_1, Q5_1: Q8_1,
		Q4_K: Q8_K, Q5_K: Q8_K, Q6_K: Q8_K,
	}
	kernelBytes = map[Type]int{
		Q8_0: q8_0Bytes, Q4_0: q4_0Bytes, Q5_0: q5_0Bytes, Q4_1: q4_1Bytes,
		Q5_1: q5_1Bytes, Q4_K: q4_KBytes, Q5_K: q5_KBytes, Q6_K: q6_KBytes,
	}
)

// The assembly kernels (dotq_amd64.s, dotq_legacy_amd64.s): for rows
// consecutive weight rows of nb blocks at w, out[r] = the dot product with
// the nb activation blocks at x; tab is the binary16 table.

//go:noescape
func q8_0RowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q4_0RowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q5_0RowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q4_1RowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q5_1RowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q4_KRowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q5_KRowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q6_KRowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
