//go:build !purego

package quant

import "golang.org/x/sys/cpu"

// hasX16AVX2 reports whether the AVX2 tiles may run: AVX2, FMA and F16C
// (the scales are widened by VCVTPH2PS).
var hasX16AVX2 = hasAVX2 && cpu.X86.HasF16C

// The 16-row layouts' assembly: AVX-512 VNNI tiles of 8, 4 and 1 tokens
// (q4_0vnni_amd64.s, q5_0x16_amd64.s, q8_0x16_amd64.s), AVX2 tiles of 4
// and 1 tokens (x16_avx2_amd64.s); each nil where the CPU lacks its
// instructions.
var (
	q4_0x16VNNI = x16Tiles(hasVNNI, q4x16Bytes, []int{8, 4, 1}, q4x16T8, q4x16T4, q4x16T1)
	q5_0x16VNNI = x16Tiles(hasVNNI, q5x16Bytes, []int{8, 4, 1}, q5x16T8, q5x16T4, q5x16T1)
	q8_0x16VNNI = x16Tiles(hasVNNI, q8x16Bytes, []int{8, 4, 1}, q8x16T8, q8x16T4, q8x16T1)
	q4_0x16AVX2 = x16Tiles(hasX16AVX2, q4x16Bytes, []int{4, 1}, q4x16A4, q4x16A1)
	q5_0x16AVX2 = x16Tiles(hasX16AVX2, q5x16Bytes, []int{4, 1}, q5x16A4, q5x16A1)
	q8_0x16AVX2 = x16Tiles(hasX16AVX2, q8x16Bytes, []int{4, 1}, q8x16A4, q8x16A1)
	q4_Kx16VNNI = x16Tiles(hasVNNI, q4kx16Bytes, []int{4, 1}, q4kx16T4, q4kx16T1)
	q6_Kx16VNNI = x16Tiles(hasVNNI, q6kx16Bytes, []int{8, 4, 1}, q6kx16T8, q6kx16T4, q6kx16T1)
)

// q4_0x16Asm, q5_0x16Asm and q8_0x16Asm are the assembly MatMulQ the
// 16-row layouts use, x16Name its instruction set: AVX-512 VNNI where the
// CPU has it (for Q8_0, with AMX for the tiles of 16 and 8 tokens where
// it has that too), else AVX2 (as GODEBUG=cpu.avx512f=off makes it on any
// CPU); Q4_K's and Q6_K's have no AVX2 kernel.
var (
	q4_0x16Asm = cmpOr(q4_0x16VNNI, q4_0x16AVX2)
	q5_0x16Asm = cmpOr(q5_0x16VNNI, q5_0x16AVX2)
	q8_0x16Asm = cmpOr(q8_0x16AMX, q8_0x16VNNI, q8_0x16AVX2)
	q4_Kx16Asm = q4_Kx16VNNI
	q6_Kx16Asm = q6_Kx16VNNI
	x16Name    = map[bool]string{true: "avx512-vnni", false: "avx2"}[hasVNNI]
)

// cmpOr returns the first of fs that is not nil.
func cmpOr(fs ...x16Func) x16Func {
	for _, f := range fs {
		if f != nil {
			return f
		}
	}
	return nil
}

// q4x16T8, q4x16T4 and q4x16T1 are the AVX-512 VNNI tiles of Q4_0's
// groups (q4_0vnni_amd64.s).
//
//go:noescape
func q4x16T8(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q4x16T4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q4x16T1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

// q5x16T8, q5x16T4 and q5x16T1 are the AVX-512 VNNI tiles of Q5_0's
// groups (q5_0x16_amd64.s).
//
//go:noescape
func q5x16T8(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q5x16T4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q5x16T1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

// q8x16T8, q8x16T4 and q8x16T1 are the AVX-512 VNNI tiles of Q8_0's
// groups (q8_0x16_amd64.s).
//
//go:noescape
func q8x16T8(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q8x16T4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q8x16T1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

// q4x16A4, q4x16A1, q8x16A4 and q8x16A1 are the AVX2 tiles of Q4_0's and
// Q8_0's groups (x16_avx2_amd64.s).
//
//go:noescape
func q4x16A4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q4x16A1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q8x16A4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q8x16A1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

// q5x16A4 and q5x16A1 are the AVX2 tiles of Q5_0's groups
// (x16_avx2_amd64.s).
//
//go:noescape
func q5x16A4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q5x16A1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

// q4kx16T4 and q4kx16T1 are the AVX-512 VNNI tiles of Q4_K's groups
// (q4_kx16_amd64.s).
//
//go:noescape
func q4kx16T4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q4kx16T1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

// q6kx16T8, q6kx16T4 and q6kx16T1 are the AVX-512 VNNI tiles of Q6_K's
// groups (q6_kx16_amd64.s).
//
//go:noescape
func q6kx16T8(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q6kx16T4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q6kx16T1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
