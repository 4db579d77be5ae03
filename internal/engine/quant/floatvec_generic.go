//go:build (!amd64 && !arm64) || purego

package quant

// The float vector kernels: pure Go on this architecture (or with -tags
// purego).
var (
	dotF32Impl  = dotF32Plain
	dotF16Impl  = dotF16Plain
	axpyF32Impl = axpyF32Go
	axpyF16Impl = axpyF16Go
	toF16Impl   = toF16Go

	scoresImpl         = scoresPlain
	scoresF16Impl      = scoresF16Plain
	weightedSumImpl    = weightedSumPlain
	weightedSumF16Impl = weightedSumF16Plain

	// the F32 and F16 weight kernels' Dot
	dotF32WImpl = dotF32
	dotF16WImpl = dotF16
)

// hasFloatKernels reports whether the float weight kernels' Dot sums as
// DotF32 and DotF16 do (with the assembly).
const hasFloatKernels = false
