//go:build !purego

package quant

// The float vector kernels on arm64: NEON (floatvec_arm64.s), which every
// arm64 CPU has, binary16 included (FCVTL and FCVTN are ARMv8.0). The
// dot products keep the eight-lane, four-accumulator order of the Go
// twins in pairs of four-lane registers (the wrappers over the assembly
// are floatvec_simd.go's).
var (
	dotF32Impl  = dotF32Vec
	dotF16Impl  = dotF16Vec
	axpyF32Impl = axpyF32Vec
	axpyF16Impl = axpyF16Vec
	toF16Impl   = toF16Vec

	// attention: one NEON dot or axpy per cached position
	scoresImpl         = scoresNEON
	scoresF16Impl      = scoresF16NEON
	weightedSumImpl    = weightedSumNEON
	weightedSumF16Impl = weightedSumF16NEON

	// the F32 and F16 weight kernels' Dot
	dotF32WImpl = dotF32WVec
	dotF16WImpl = dotF16WVec
)

// hasFloatKernels reports whether the float weight kernels' Dot sums as
// DotF32 and DotF16 do (with the assembly).
const hasFloatKernels = true

// The attention kernels: one NEON dot or axpy per cached position,
// summed as the Go twins sum.

func scoresNEON(dst, q, k []float32, stride int) { scoresBy(dotF32Vec, dst, q, k, stride) }

func scoresF16NEON(dst, q []float32, k []uint16, stride int) {
	scoresBy(dotF16Vec, dst, q, k, stride)
}

func weightedSumNEON(out, w, v []float32, stride int) { weightedSumBy(axpyF32Vec, out, w, v, stride) }

func weightedSumF16NEON(out, w []float32, v []uint16, stride int) {
	weightedSumBy(axpyF16Vec, out, w, v, stride)
}
