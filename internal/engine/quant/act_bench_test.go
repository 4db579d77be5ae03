package quant

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkQuantizeAct measures activation quantisation of a 768-element
// row (the input of a 125M model's q, k, v, gate and up products) against
// its pure-Go twin in the same run: ns per row.
func BenchmarkQuantizeAct(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, 768)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	dst := make([]byte, 768/qkK*q8_KBytes+768/32*q8_1Bytes)
	b.Run("Q8_0", func(b *testing.B) {
		for b.Loop() {
			quantizeActQ8_0(dst, x)
		}
	})
	b.Run("Q8_0-go", func(b *testing.B) {
		for b.Loop() {
			for i := 0; i < len(x)/32; i++ {
				quantize32Go((*[32]float32)(x[32*i:]), (*[32]byte)(dst[34*i+2:]))
			}
		}
	})
	b.Run("Q8_K", func(b *testing.B) {
		for b.Loop() {
			quantizeActQ8_K(dst, x)
		}
	})
	b.Run("Q8_K-go", func(b *testing.B) {
		for b.Loop() {
			for i := 0; i < len(x)/qkK; i++ {
				quantizeQ8KBlockGo((*[qkK]float32)(x[qkK*i:]), (*[q8_KBytes]byte)(dst[q8_KBytes*i:]))
			}
		}
	})
}
