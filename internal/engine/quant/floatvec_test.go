package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// floatVecs decodes fuzz bytes into a float32 vector (every bit pattern
// allowed but NaN and infinity, which a dot product only propagates) and
// a binary16 vector of the same length.
func floatVecs(data []byte) (a, b []float32, h []uint16) {
	n := len(data) / 10
	a, b, h = make([]float32, n), make([]float32, n), make([]uint16, n)
	for i := range n {
		a[i] = finite(math.Float32frombits(binary.LittleEndian.Uint32(data[10*i:])))
		b[i] = finite(math.Float32frombits(binary.LittleEndian.Uint32(data[10*i+4:])))
		h[i] = binary.LittleEndian.Uint16(data[10*i+8:])
		if h[i]&0x7c00 == 0x7c00 {
			h[i] &^= 0x4000 // no infinities or NaNs
		}
	}
	return a, b, h
}

func finite(f float32) float32 {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return 1.5
	}
	return f
}

// closeDot reports whether two dot products in the same summation order
// agree: they may differ only through fma32's double rounding, far below
// the sum of the magnitudes of the terms.
func closeDot(got, want float32, a []float32, b func(int) float32) bool {
	if got == want || (math.IsInf(float64(got), 0) && got == want) {
		return true
	}
	var mag float64
	for i := range a {
		mag += math.Abs(float64(a[i]) * float64(b(i)))
	}
	if mag > math.MaxFloat32/2 || math.IsNaN(float64(got)) && math.IsNaN(float64(want)) {
		return true // overflowed: both are inf or NaN somewhere along the way
	}
	return math.Abs(float64(got)-float64(want)) <= mag*floatTol(len(a))
}

// floatTol is the relative error (to the sum of the magnitudes of the
// terms) allowed between a dispatched float kernel over n terms and its
// twin: double rounding alone with the assembly, which sums in the twin's
// order; a rounding per term with the plain Go kernels, which do not.
func floatTol(n int) float64 {
	if hasFloatKernels {
		return 0x1p-22
	}
	return float64(n+8) * 0x1p-23
}

// FuzzFloatVec checks the dispatched float vector kernels (AVX2 where the
// CPU has it) against their Go twins: dot products to within double
// rounding, axpy and the binary16 rounding bit for bit.
func FuzzFloatVec(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 64, 100, 257} {
		seed := make([]byte, 10*n+1)
		for i := 0; i+4 <= 10*n; i += 4 {
			binary.LittleEndian.PutUint32(seed[i:], math.Float32bits(float32(r.NormFloat64())))
		}
		seed[len(seed)-1] = byte(n)
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		alpha := float32(int8(data[len(data)-1])) / 16
		a, b, h := floatVecs(data[:len(data)-1])
		hf := func(i int) float32 { return f16Table[h[i]] }
		if got, want := DotF32(a, b), dotF32Go(a, b); !closeDot(got, want, a, func(i int) float32 { return b[i] }) {
			t.Errorf("DotF32 n=%d: %g, Go twin %g", len(a), got, want)
		}
		if got, want := DotF16(a, h), dotF16Go(a, h); !closeDot(got, want, a, hf) {
			t.Errorf("DotF16 n=%d: %g, Go twin %g", len(a), got, want)
		}
		if hasFloatKernels {
			// The weight kernels' Dot sums as DotF32 and DotF16 do.
			wf, wh := make([]byte, 4*len(b)), make([]byte, 2*len(h))
			for i := range b {
				binary.LittleEndian.PutUint32(wf[4*i:], math.Float32bits(b[i]))
				binary.LittleEndian.PutUint16(wh[2*i:], h[i])
			}
			kf, _ := Lookup(F32)
			kh, _ := Lookup(F16)
			if got, want := kf.Dot(a, wf), dotF32Go(a, b); !closeDot(got, want, a, func(i int) float32 { return b[i] }) {
				t.Errorf("F32 Dot n=%d: %g, Go twin %g", len(a), got, want)
			}
			if got, want := kh.Dot(a, wh), dotF16Go(a, h); !closeDot(got, want, a, hf) {
				t.Errorf("F16 Dot n=%d: %g, Go twin %g", len(a), got, want)
			}
		}
		y1, y2 := append([]float32(nil), b...), append([]float32(nil), b...)
		AxpyF32(y1, alpha, a)
		axpyF32Go(y2, alpha, a)
		sameBits(t, "AxpyF32", y1, y2)
		copy(y1, b)
		copy(y2, b)
		AxpyF16(y1, alpha, h)
		axpyF16Go(y2, alpha, h)
		sameBits(t, "AxpyF16", y1, y2)
		h1, h2 := make([]uint16, len(a)), make([]uint16, len(a))
		ToF16(h1, a)
		toF16Go(h2, a)
		for i := range h1 {
			if h1[i] != h2[i] {
				t.Fatalf("ToF16(%g) = %#04x, Go twin %#04x", a[i], h1[i], h2[i])
			}
		}
		back := make([]float32, len(h))
		FromF16(back, h)
		for i := range back {
			if back[i] != f16ToF32(h[i]) {
				t.Fatalf("FromF16(%#04x) = %g, want %g", h[i], back[i], f16ToF32(h[i]))
			}
		}
	})
}

func sameBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("%s: element %d of %d is %g, Go twin %g", name, i, len(got), got[i], want[i])
		}
	}
}

// TestDotF32Exact checks the Go twin itself on sums that are exact in
// float32 (small integers), so that a wrong summation order or a dropped
// element cannot hide behind the twin agreeing with the assembly.
func TestDotF32Exact(t *testing.T) {
	for _, n := range []int{1, 5, 8, 13, 32, 45, 64, 200} {
		a, b, h := make([]float32, n), make([]float32, n), make([]uint16, n)
		var want float32
		for i := range a {
			a[i], b[i] = float32(i%7-3), float32(i%5+1)
			h[i] = f32ToF16(b[i])
			want += a[i] * b[i]
		}
		for _, f := range []struct {
			name string
			got  float32
		}{{"DotF32", DotF32(a, b)}, {"dotF32Go", dotF32Go(a, b)}, {"DotF16", DotF16(a, h)}, {"dotF16Go", dotF16Go(a, h)}} {
			if f.got != want {
				t.Errorf("n=%d: %s = %g, want %g", n, f.name, f.got, want)
			}
		}
		y := make([]float32, n)
		AxpyF16(y, 2, h)
		AxpyF32(y, -1, b)
		for i := range y {
			if y[i] != b[i] {
				t.Fatalf("n=%d: 2·b - b = %g at %d, want %g", n, y[i], i, b[i])
			}
		}
	}
}

// FuzzAttention checks the dispatched attention kernels (AVX2 where the
// CPU has it) against their Go twins on a cache of rows × stride floats:
// every score and output element to within fma32's double rounding.
func FuzzAttention(f *testing.F) {
	for _, c := range [][3]byte{{1, 8, 8}, {5, 64, 64}, {7, 64, 128}, {9, 40, 56}, {3, 12, 12}, {4, 96, 200}} {
		f.Add(c[0], c[1], c[2], uint64(c[0])*7+uint64(c[1]))
	}
	f.Fuzz(func(t *testing.T, rows, hd, stride byte, seed uint64) {
		n, h := int(rows%40)+1, int(hd%129)
		s := max(int(stride), h)
		r := rand.New(rand.NewPCG(seed, 3))
		q, w, out := make([]float32, h), make([]float32, n), make([]float32, h)
		k := make([]float32, (n-1)*s+h)
		k16 := make([]uint16, len(k))
		for i := range q {
			q[i], out[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for i := range w {
			w[i] = float32(r.Float64())
		}
		for i := range k {
			k[i] = float32(r.NormFloat64())
			k16[i] = f32ToF16(k[i])
		}
		mag := func(i int) float64 {
			var m float64
			for j := range h {
				m += math.Abs(float64(q[j]) * float64(k[i*s+j]))
			}
			return m
		}
		got, want := make([]float32, n), make([]float32, n)
		Scores(got, q, k, s)
		scoresGo(want, q, k, s)
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > mag(i)*floatTol(h) {
				t.Fatalf("Scores rows=%d hd=%d stride=%d: [%d] %g, Go twin %g", n, h, s, i, got[i], want[i])
			}
		}
		ScoresF16(got, q, k16, s)
		scoresF16Go(want, q, k16, s)
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > mag(i)*floatTol(h) {
				t.Fatalf("ScoresF16 rows=%d hd=%d stride=%d: [%d] %g, Go twin %g", n, h, s, i, got[i], want[i])
			}
		}
		for _, f16 := range []bool{false, true} {
			o1, o2 := append([]float32(nil), out...), append([]float32(nil), out...)
			if f16 {
				WeightedSumF16(o1, w, k16, s)
				weightedSumF16Go(o2, w, k16, s)
			} else {
				WeightedSum(o1, w, k, s)
				weightedSumGo(o2, w, k, s)
			}
			for j := range o1 {
				m := math.Abs(float64(out[j]))
				for i := range w {
					m += math.Abs(float64(w[i]) * float64(k[i*s+j]))
				}
				if math.Abs(float64(o1[j]-o2[j])) > m*floatTol(n) {
					t.Fatalf("WeightedSum f16=%v rows=%d hd=%d stride=%d: [%d] %g, Go twin %g", f16, n, h, s, j, o1[j], o2[j])
				}
			}
		}
	})
}

// TestAttentionKernels checks the twins themselves on exact sums.
func TestAttentionKernels(t *testing.T) {
	const n, h, s = 6, 16, 24
	q, k, w := make([]float32, h), make([]float32, (n-1)*s+h), make([]float32, n)
	k16 := make([]uint16, len(k))
	for i := range q {
		q[i] = float32(i%3 - 1)
	}
	for i := range k {
		k[i] = float32(i%5 - 2)
		k16[i] = f32ToF16(k[i])
	}
	for i := range w {
		w[i] = float32(i + 1)
	}
	sc, sc16 := make([]float32, n), make([]float32, n)
	Scores(sc, q, k, s)
	ScoresF16(sc16, q, k16, s)
	for i := range sc {
		var want float32
		for j := range h {
			want += q[j] * k[i*s+j]
		}
		if sc[i] != want || sc16[i] != want {
			t.Errorf("score %d = %g (f16 %g), want %g", i, sc[i], sc16[i], want)
		}
	}
	out, out16 := make([]float32, h), make([]float32, h)
	WeightedSum(out, w, k, s)
	WeightedSumF16(out16, w, k16, s)
	for j := range out {
		var want float32
		for i := range w {
			want += w[i] * k[i*s+j]
		}
		if out[j] != want || out16[j] != want {
			t.Errorf("out %d = %g (f16 %g), want %g", j, out[j], out16[j], want)
		}
	}
}
