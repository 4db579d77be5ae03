//go:build !amd64 || purego

package quant

// quantize32 is quantize32Go where there is no assembly for it.
func quantize32(x *[32]float32, q *[32]byte) (sum int, d float32) {
	return quantize32Go(x, q)
}

// quantizeQ8KBlock is quantizeQ8KBlockGo where there is no assembly for
// it.
func quantizeQ8KBlock(xb *[qkK]float32, b *[q8_KBytes]byte) { quantizeQ8KBlockGo(xb, b) }
