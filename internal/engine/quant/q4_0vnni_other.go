//go:build (!amd64 && !arm64) || purego

package quant

// No assembly on the 16-row Q4_0, Q5_0, Q8_0, Q4_K or Q6_K groups on
// this architecture (or with -tags purego): Repacked returns nil for
// Q4_0, Q5_0, Q4_K and Q6_K and the row-by-row layout's kernel (also nil
// there) for Q8_0.
var (
	q4_0x16Asm, q5_0x16Asm, q8_0x16Asm, q4_Kx16Asm, q6_Kx16Asm x16Func
	x16Name                                                    = ""
	q8x16Name                                                  = x16Name
)
