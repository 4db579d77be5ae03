//go:build (!amd64 && !arm64) || purego

package quant

// The integer dot products: pure Go on this architecture (or with
// -tags purego).
var (
	dotQ8_0Impl = dotQ8_0Go
	dotQ4_0Impl = dotQ4_0Go
	dotQ5_0Impl = dotQ5_0Go
	dotQ4_1Impl = dotQ4_1Go
	dotQ5_1Impl = dotQ5_1Go
	dotQ5_KImpl = dotQ5_KGo

	// nil: register loops over DotQ.
	rowsQ8_0Impl, rowsQ4_0Impl, rowsQ5_0Impl, rowsQ4_1Impl, rowsQ5_1Impl,
	rowsQ4_KImpl, rowsQ5_KImpl, rowsQ6_KImpl func(out []float32, xq, w []byte)
	dotQ4_KImpl = dotQ4_KGo
	dotQ6_KImpl = dotQ6_KGo
)

// simdName names the instruction set the integer dot products use.
const simdName = "go"
