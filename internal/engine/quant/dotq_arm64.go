//go:build !purego

package quant

// The integer dot products on arm64: NEON assembly (dotq_arm64.s) for
// the Q8_0, Q4_K and Q6_K weights, the types of the models people run on
// phones and small boards; pure Go for the others. NEON (Advanced SIMD)
// is part of every ARMv8-A CPU, so the kernels use only ARMv8.0
// instructions and need no feature check.

// The integer dot products: NEON for Q8_0, Q4_K and Q6_K, pure Go for the
// rest (register then loops over DotQ for DotQRows).
var (
	dotQ8_0Impl = neonDot(Q8_0)
	dotQ4_KImpl = neonDot(Q4_K)
	dotQ6_KImpl = neonDot(Q6_K)

	rowsQ8_0Impl = neonRowsOf(Q8_0)
	rowsQ4_KImpl = neonRowsOf(Q4_K)
	rowsQ6_KImpl = neonRowsOf(Q6_K)

	dotQ4_0Impl = dotQ4_0Go
	dotQ5_0Impl = dotQ5_0Go
	dotQ4_1Impl = dotQ4_1Go
	dotQ5_1Impl = dotQ5_1Go
	dotQ5_KImpl = dotQ5_KGo

	rowsQ4_0Impl, rowsQ5_0Impl, rowsQ4_1Impl, rowsQ5_1Impl,
	rowsQ5_KImpl func(out []float32, xq, w []byte)
)

// simdName names the instruction set the integer dot products use.
const simdName = "neon"

// neonDot returns the NEON DotQ of t.
func neonDot(t Type) func(xq, w []byte) float32 {
	return func(xq, w []byte) float32 {
		var out [1]float32
		neonRows(t, out[:], xq, w)
		return out[0]
	}
}

// neonRowsOf returns the NEON DotQRows of t.
func neonRowsOf(t Type) func(out []float32, xq, w []byte) {
	return func(out []float32, xq, w []byte) { neonRows(t, out, xq, w) }
}

// neonRows sets out[r] to the dot product of the activations xq with row
// r of w, for the len(out) consecutive rows of weights of type t in w,
// with one call into the assembly.
func neonRows(t Type, out []float32, xq, w []byte) {
	var act, wb int
	switch t {
	case Q8_0:
		act, wb = q8_0Bytes, q8_0Bytes
	case Q4_K:
		act, wb = q8_KBytes, q4_KBytes
	case Q6_K:
		act, wb = q8_KBytes, q6_KBytes
	default:
		panic("quant: no NEON kernel for " + t.String())
	}
	nb := len(xq) / act
	if nb == 0 || len(out) == 0 {
		clear(out)
		return
	}
	_ = w[len(out)*nb*wb-1] // every row is there
	x, wp, o, rows := &xq[0], &w[0], &out[0], len(out)
	switch t {
	case Q8_0:
		q8_0RowsNEON(x, wp, nb, f16Table, o, rows)
	case Q4_K:
		q4_KRowsNEON(x, wp, nb, f16Table, o, rows)
	case Q6_K:
		q6_KRowsNEON(x, wp, nb, f16Table, o, rows)
	}
}

// The assembly kernels (dotq_arm64.s): for rows consecutive weight rows of
// nb blocks at w, out[r] = the dot product with the nb activation blocks
// at x; tab is the binary16 table.

//go:noescape
func q8_0RowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q4_KRowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)

//go:noescape
func q6_KRowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
