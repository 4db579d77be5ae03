//go:build !purego

package quant

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkFloatVecNEON compares the NEON float vector kernels with their
// Go twins on 4096 elements, in one run (under emulation the ratio says
// nothing about a real CPU).
func BenchmarkFloatVecNEON(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	x, y := make([]float32, benchRow), make([]float32, benchRow)
	h := make([]uint16, benchRow)
	for i := range x {
		x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		h[i] = f32ToF16(y[i])
	}
	var sink float32
	for _, k := range []struct {
		name string
		f    func()
	}{
		{"DotF32/neon", func() { sink += dotF32Vec(x, y) }},
		{"DotF32/go", func() { sink += dotF32Go(x, y) }},
		{"DotF16/neon", func() { sink += dotF16Vec(x, h) }},
		{"DotF16/go", func() { sink += dotF16Go(x, h) }},
		{"AxpyF32/neon", func() { axpyF32Vec(y, 0x1p-20, x) }},
		{"AxpyF32/go", func() { axpyF32Go(y, 0x1p-20, x) }},
		{"ToF16/neon", func() { toF16Vec(h, x) }},
		{"ToF16/go", func() { toF16Go(h, x) }},
	} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				k.f()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRow, "ns/elem")
		})
	}
	_ = sink
}
