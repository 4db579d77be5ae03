package quant

import (
	"math/rand/v2"
	"testing"
)

// benchRow is the row length of the benchmarks: a typical hidden size.
const benchRow = 4096

var benchTypes = []Type{F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K}

func benchInputs(b *testing.B, typ Type) (*Kernel, []float32, []byte) {
	k, err := Lookup(typ)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 12))
	x := make([]float32, benchRow)
	src := make([]float32, benchRow)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		src[i] = float32(r.NormFloat64() * 0.05)
	}
	w := make([]byte, benchRow/k.BlockSize*k.BlockBytes)
	k.Quantize(w, src)
	return k, x, w
}

func report(b *testing.B, rowBytes int) {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/benchRow, "ns/elem")
	b.ReportMetric(float64(rowBytes)/ns, "GB/s")
}

// BenchmarkDot measures the fused dot product of a 4096-element row:
// nanoseconds per element and gigabytes of encoded weights read per second.
func BenchmarkDot(b *testing.B) {
	for _, typ := range benchTypes {
		b.Run(typ.String(), func(b *testing.B) {
			k, x, w := benchInputs(b, typ)
			var sink float32
			for b.Loop() {
				sink += k.Dot(x, w)
			}
			report(b, len(w))
			_ = sink
		})
	}
}

// BenchmarkDequant measures the reference dequantiser on a 4096-element row.
func BenchmarkDequant(b *testing.B) {
	for _, typ := range benchTypes {
		b.Run(typ.String(), func(b *testing.B) {
			k, _, w := benchInputs(b, typ)
			dst := make([]float32, benchRow)
			for b.Loop() {
				k.Dequant(dst, w)
			}
			report(b, len(w))
		})
	}
}

// BenchmarkDotQ measures the integer dot product of a 4096-element row
// with activations quantised once beforehand (the engine's inner loop):
// nanoseconds per element and gigabytes of encoded weights per second.
func BenchmarkDotQ(b *testing.B) {
	for _, typ := range dotQTypes {
		b.Run(typ.String(), func(b *testing.B) {
			k, x, w := benchInputs(b, typ)
			xq := make([]byte, k.ActRowBytes(benchRow))
			k.QuantizeAct(xq, x)
			var sink float32
			for b.Loop() {
				sink += k.DotQ(xq, w)
			}
			report(b, len(w))
			_ = sink
		})
	}
}
