//go:build !amd64 || purego

package quant

// The integer dot products: pure Go on this architecture (or with
// -tags purego).
var (
	dotQ8_0Impl = dotQ8_0Go
	dotQ4_KImpl = dotQ4_KGo
	dotQ6_KImpl = dotQ6_KGo
)

// simdName names the instruction set the integer dot products use.
const simdName = "go"
