//go:build !purego

package quant

import "unsafe"

// quantize32 is quantize32Go, in AVX2 where the CPU has it (bit for bit
// the same on finite input: the same float32 products, rounded to even).
// Both are meaningless when 127/max|x| overflows (max|x| < 3.8e-37): Go
// then yields 0s and the assembly -128s, as ggml's AVX2 code does.
func quantize32(x *[32]float32, q *[32]byte) (sum int, d float32) {
	if !hasAVX2 {
		return quantize32Go(x, q)
	}
	return quantize32Asm(unsafe.Pointer(x), unsafe.Pointer(q))
}

//go:noescape
func quantize32Asm(x, q unsafe.Pointer) (sum int, d float32)

// quantizeQ8KBlock is quantizeQ8KBlockGo, in AVX2 where the CPU has it
// (bit for bit the same on finite input).
func quantizeQ8KBlock(xb *[qkK]float32, b *[q8_KBytes]byte) {
	if !hasAVX2 {
		quantizeQ8KBlockGo(xb, b)
		return
	}
	quantizeQ8KAsm(unsafe.Pointer(xb), unsafe.Pointer(b))
}

//go:noescape
func quantizeQ8KAsm(x, b unsafe.Pointer)
