//go:build !purego

package quant

// The 16-row layouts' assembly on arm64: NEON tiles of 4 and 1 tokens
// with SDOT by element (x16_arm64.s), on CPUs with the dot-product
// extension; nil on the others (ARMv8.0, such as the Cortex-A53), which
// keep the file's layouts and their per-row kernels.
var (
	q4_0x16SDOT = x16Tiles(hasSDOT, q4x16Bytes, []int{4, 1}, q4x16S4, q4x16S1)
	q8_0x16SDOT = x16Tiles(hasSDOT, q8x16Bytes, []int{4, 1}, q8x16S4, q8x16S1)
	q4_Kx16SDOT = x16Tiles(hasSDOT, q4kx16Bytes, []int{4, 1}, q4kx16S4, q4kx16S1)
)

// q4_0x16Asm, q8_0x16Asm and q4_Kx16Asm are the assembly MatMulQ the
// 16-row layouts use, x16Name its instruction set; Q5_0's and Q6_K's
// layouts have no arm64 kernel, so Repacked leaves Q5_0 and Q6_K in the
// file's layout here.
var (
	q4_0x16Asm = q4_0x16SDOT
	q8_0x16Asm = q8_0x16SDOT
	q4_Kx16Asm = q4_Kx16SDOT
	q5_0x16Asm x16Func
	q6_Kx16Asm x16Func
	x16Name    = "neon+sdot"
	q8x16Name  = x16Name
)

// q4x16S4 and q4x16S1 are the SDOT tiles of Q4_0's groups, q8x16S4 and
// q8x16S1 of Q8_0's (x16_arm64.s).
//
//go:noescape
func q4x16S4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q4x16S1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q8x16S4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q8x16S1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

// q4kx16S4 and q4kx16S1 are the SDOT tiles of Q4_K's groups
// (x16_arm64.s).
//
//go:noescape
func q4kx16S4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q4kx16S1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
