//go:build !purego

package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// simdKernels pairs each assembly dot product with its pure-Go reference.
var simdKernels = []struct {
	typ        Type
	simd, pure func(xq, w []byte) float32
}{
	{Q8_0, dotQ8_0Impl, dotQ8_0Go},
	{Q4_K, dotQ4_KImpl, dotQ4_KGo},
	{Q6_K, dotQ6_KImpl, dotQ6_KGo},
	{Q4_0, dotQ4_0Impl, dotQ4_0Go},
	{Q5_0, dotQ5_0Impl, dotQ5_0Go},
	{Q4_1, dotQ4_1Impl, dotQ4_1Go},
	{Q5_1, dotQ5_1Impl, dotQ5_1Go},
	{Q5_K, dotQ5_KImpl, dotQ5_KGo},
}

// sumsLikeGo lists the assembly dot products that take their Go twin's
// float32 steps: each block's integer sums are reduced exactly to one
// int32 before anything is rounded, then scaled and added in the twin's
// order, so that the result is the twin's bit for bit. (Keeping eight
// lanes of partial sums in float32 instead, as the others do, rounds each
// lane: about 1.5 times the twin's error for Q4_K and 3 times for Q6_K,
// measured against float64 truth.)
var sumsLikeGo = map[Type]bool{Q4_K: true, Q6_K: true}

// setUnitScales sets every stored scale of the weight blocks w and the
// activation blocks xq to 1, so that a dot product is a sum of integers.
func setUnitScales(typ Type, k *Kernel, w, xq []byte) {
	for b := 0; b+k.BlockBytes <= len(w); b += k.BlockBytes {
		for _, off := range scaleFields[typ] {
			binary.LittleEndian.PutUint16(w[b+off:], 0x3c00)
		}
	}
	block, bytes := actLayout(k.ActType)
	_ = block
	for b := 0; b+bytes <= len(xq); b += bytes {
		switch k.ActType {
		case Q8_K:
			binary.LittleEndian.PutUint32(xq[b:], math.Float32bits(1))
		case Q8_1:
			binary.LittleEndian.PutUint16(xq[b:], 0x3c00)
			var s int
			for _, q := range xq[b+4 : b+bytes] {
				s += int(int8(q))
			}
			binary.LittleEndian.PutUint16(xq[b+2:], f32ToF16(float32(s)))
		default:
			binary.LittleEndian.PutUint16(xq[b:], 0x3c00)
		}
	}
}

// checkSIMD compares the assembly kernel i with the pure-Go one on the
// weight blocks data and activations drawn from seed: with every scale
// set to 1 the result is a sum of integers, exact in float32 while the
// sum of the magnitudes of its terms stays below 2^24, so there both must
// equal the integer reference exactly; with the real scales they must agree
// to within float32 rounding of the scaled block sums (the sumsLikeGo
// kernels: bit for bit).
func checkSIMD(t *testing.T, i int, data []byte, seed uint64) {
	sk := simdKernels[i]
	k, _ := Lookup(sk.typ)
	nb := min(max(len(data)/k.BlockBytes, 1), 4096/k.BlockSize)
	w := make([]byte, nb*k.BlockBytes)
	if len(data) > 0 {
		for j := range w {
			w[j] = data[j%len(data)]
		}
	}
	n := nb * k.BlockSize
	r := rand.New(rand.NewPCG(seed, ^seed))
	x := make([]float32, n)
	for j := range x {
		x[j] = float32(r.NormFloat64())
	}
	xq := make([]byte, k.ActRowBytes(n))
	k.QuantizeAct(xq, x)

	// Real scales.
	nan, inf := specials(sk.typ, k, w)
	got, want := sk.simd(xq, w), sk.pure(xq, w)
	if sumsLikeGo[sk.typ] && math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
		t.Fatalf("%v, %d blocks: SIMD %v (%#08x), Go %v (%#08x), want the same bits", sk.typ, nb, got, math.Float32bits(got), want, math.Float32bits(want))
	}
	xd, deq := make([]float32, n), make([]float32, n)
	dequantAct(k.ActType, xd, xq)
	k.Dequant(deq, w)
	mins := minTerms(sk.typ, w, n)
	magnitude := func() float64 {
		var mag float64
		for j, v := range deq {
			m := math.Abs(float64(v))
			if mins != nil {
				m += math.Abs(float64(mins[j]))
			}
			mag += math.Abs(float64(xd[j])) * m
		}
		return mag
	}
	switch mag := magnitude(); {
	case nan:
		if !math.IsNaN(float64(got)) || !math.IsNaN(float64(want)) {
			t.Fatalf("%v: SIMD %v, Go %v, want both NaN (a stored scale is NaN)", sk.typ, got, want)
		}
	case inf || mag > 1e36:
		// ±inf or NaN, or overflow, depends on the order of the sums.
	default:
		tol := float64(nb+8)*0x1p-22*mag + float64(n)*0x1p-130
		if d := math.Abs(float64(got) - float64(want)); !(d <= tol) {
			t.Fatalf("%v, %d blocks: SIMD %v, Go %v, difference %g above %g", sk.typ, nb, got, want, d, tol)
		}
	}

	// Unit scales: integer sums.
	setUnitScales(sk.typ, k, w, xq)
	dequantAct(k.ActType, xd, xq)
	k.Dequant(deq, w)
	mins = minTerms(sk.typ, w, n)
	var ref float64
	for j, v := range deq {
		ref += float64(xd[j]) * float64(v)
	}
	got, want = sk.simd(xq, w), sk.pure(xq, w)
	if mag := magnitude(); mag < 1<<24 {
		if float64(got) != ref || float64(want) != ref {
			t.Fatalf("%v, %d blocks, unit scales: SIMD %v, Go %v, want both exactly %v", sk.typ, nb, got, want, ref)
		}
	} else if d := math.Abs(float64(got) - float64(want)); d > float64(nb+8)*0x1p-22*mag {
		t.Fatalf("%v, %d blocks, unit scales: SIMD %v, Go %v, difference %g", sk.typ, nb, got, want, d)
	}
}

// FuzzDotQAVX2 holds the assembly dot products to the pure-Go ones.
func FuzzDotQAVX2(f *testing.F) {
	if !hasAVX2 {
		f.Skip("no AVX2 on this CPU")
	}
	types := make([]Type, len(simdKernels))
	for i, sk := range simdKernels {
		types[i] = sk.typ
	}
	addQuantizedSeeds(f, types)
	f.Fuzz(func(t *testing.T, sel uint8, data []byte, seed uint64) {
		checkSIMD(t, int(sel)%len(simdKernels), data, seed)
	})
}

// TestDotQAVX2RandomBlocks runs the SIMD check on random bytes on every
// plain test run.
func TestDotQAVX2RandomBlocks(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	r := rand.New(rand.NewPCG(21, 22))
	for i, sk := range simdKernels {
		t.Run(sk.typ.String(), func(t *testing.T) {
			k, _ := Lookup(sk.typ)
			for range 300 {
				data := make([]byte, (1+r.IntN(40))*k.BlockBytes)
				for j := range data {
					data[j] = byte(r.Uint32())
				}
				checkSIMD(t, i, data, r.Uint64())
			}
		})
	}
}
