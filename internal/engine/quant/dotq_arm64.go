//go:build !purego

package quant

import "golang.org/x/sys/cpu"

// The integer dot products on arm64: NEON assembly (dotq_arm64.s) for
// the Q8_0, Q4_0, Q4_K and Q6_K weights, the types of the models people
// run on phones and small boards; pure Go for the others. NEON (Advanced
// SIMD) is part of every ARMv8-A CPU, so the base kernels use only
// ARMv8.0 instructions and need no feature check; CPUs with the
// dot-product extension (SDOT, optional from ARMv8.2, in most phones
// since 2018) get a second set of kernels that multiply and add four
// bytes a lane in one instruction.

// hasSDOT reports whether the CPU has the dot-product instructions
// (x/sys/cpu calls the feature ASIMDDP).
var hasSDOT = cpu.ARM64.HasASIMDDP

// The integer dot products: NEON for Q8_0, Q4_0, Q4_K and Q6_K, pure Go
// for the rest (register then loops over DotQ for DotQRows).
var (
	dotQ8_0Impl = neonDot(Q8_0, hasSDOT)
	dotQ4_0Impl = neonDot(Q4_0, hasSDOT)
	dotQ4_KImpl = neonDot(Q4_K, hasSDOT)
	dotQ6_KImpl = neonDot(Q6_K, hasSDOT)

	rowsQ8_0Impl = neonRowsOf(Q8_0, hasSDOT)
	rowsQ4_0Impl = neonRowsOf(Q4_0, hasSDOT)
	rowsQ4_KImpl = neonRowsOf(Q4_K, hasSDOT)
	rowsQ6_KImpl = neonRowsOf(Q6_K, hasSDOT)

	dotQ5_0Impl = dotQ5_0Go
	dotQ4_1Impl = dotQ4_1Go
	dotQ5_1Impl = dotQ5_1Go
	dotQ5_KImpl = dotQ5_KGo

	rowsQ5_0Impl, rowsQ4_1Impl, rowsQ5_1Impl,
	rowsQ5_KImpl func(out []float32, xq, w []byte)
)

// simdName names the instruction set the integer dot products use.
var simdName = map[bool]string{true: "neon+sdot", false: "neon"}[hasSDOT]

// neonBlocks gives, for each type with NEON kernels, the bytes of an
// activation block and of a weight block.
var neonBlocks = map[Type][2]int{
	Q8_0: {q8_0Bytes, q8_0Bytes},
	Q4_0: {q8_0Bytes, q4_0Bytes},
	Q4_K: {q8_KBytes, q4_KBytes},
	Q6_K: {q8_KBytes, q6_KBytes},
}

// neonDot returns the NEON DotQ of t, with SDOT or without.
func neonDot(t Type, sdot bool) func(xq, w []byte) float32 {
	act, wb := neonSizes(t)
	return func(xq, w []byte) float32 {
		nb := len(xq) / act
		if nb == 0 {
			return 0
		}
		_ = w[nb*wb-1]
		var out float32
		neonCall(t, sdot, &xq[0], &w[0], nb, &out, 1)
		return out
	}
}

// neonSizes returns the bytes of an activation block and of a weight
// block of t, which must have NEON kernels.
func neonSizes(t Type) (act, wb int) {
	blocks, ok := neonBlocks[t]
	if !ok {
		panic("quant: no NEON kernel for " + t.String())
	}
	return blocks[0], blocks[1]
}

// neonRowsOf returns the NEON DotQRows of t, with SDOT or without: one
// call into the assembly for all the rows.
func neonRowsOf(t Type, sdot bool) func(out []float32, xq, w []byte) {
	act, wb := neonSizes(t)
	return func(out []float32, xq, w []byte) {
		nb := len(xq) / act
		if nb == 0 || len(out) == 0 {
			clear(out)
			return
		}
		_ = w[len(out)*nb*wb-1] // every row is there
		neonCall(t, sdot, &xq[0], &w[0], nb, &out[0], len(out))
	}
}

// neonCall runs the assembly kernel of t: for rows consecutive weight
// rows of nb blocks at w, out[r] = the dot product with the nb activation
// blocks at x. The calls are static so that the outputs, which the
// assembly does not keep, stay on the caller's stack.
func neonCall(t Type, sdot bool, x, w *byte, nb int, out *float32, rows int) {
	switch {
	case t == Q8_0 && sdot:
		q8_0RowsSDOT(x, w, nb, f16Table, out, rows)
	case t == Q8_0:
		q8_0RowsNEON(x, w, nb, f16Table, out, rows)
	case t == Q4_0 && sdot:
		q4_0RowsSDOT(x, w, nb, f16Table, out, rows)
	case t == Q4_0:
		q4_0RowsNEON(x, w, nb, f16Table, out, rows)
	case t == Q4_K && sdot:
		q4_KRowsSDOT(x, w, nb, f16Table, out, rows)
	case t == Q4_K:
		q4_KRowsNEON(x, w, nb, f16Table, out, rows)
	case t == Q6_K && sdot:
		q6_KRowsSDOT(x, w, nb, f16Table, out, rows)
	case t == Q6_K:
		q6_KRowsNEON(x, w, nb, f16Table, out, rows)
	}
}

// The assembly kernels (dotq_arm64.s), the ARMv8.0 ones (NEON) and the
// dot-product ones (SDOT); tab is the binary16 table.

//go:noescape
func q8_0RowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q8_0RowsSDOT(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q4_0RowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q4_0RowsSDOT(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q4_KRowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q4_KRowsSDOT(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q6_KRowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q6_KRowsSDOT(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
