package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The scalar kernels the vector ones replaced, kept as references: the
// new ones must agree with them (TestVectorMatchesScalar) and beat them
// (BenchmarkSerialKernels).

func rmsnormScalar(dst, x, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	for i, v := range x {
		dst[i] = v * scale * w[i]
	}
}

func scaleSoftmaxScalar(x []float32, scale float32) {
	for i := range x {
		x[i] *= scale
	}
	mx := x[0]
	for _, v := range x[1:] {
		mx = max(mx, v)
	}
	var sum float32
	for i, v := range x {
		x[i] = expf(v - mx)
		sum += x[i]
	}
	inv := 1 / sum
	for i := range x {
		x[i] *= inv
	}
}

func swigluScalar(gate, up []float32) {
	for i, g := range gate {
		gate[i] = g / (1 + expf(-g)) * up[i]
	}
}

// expf returns e**x in float32 to within about 2 ulp (TestExpf), the
// scalar exp the kernels used before expVec: x = n·ln2 + r with
// |r| ≤ ln2/2, e**r by a degree-6 polynomial, and 2**n put into the
// exponent bits.
func expf(x float32) float32 {
	if !(x >= -87.33 && x <= 88.72) {
		switch {
		case x > 88.72:
			return float32(math.Inf(1))
		case x < -87.33:
			return 0
		}
		return x // NaN
	}
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	t := x * log2e
	if t < 0 {
		t -= 0.5
	} else {
		t += 0.5
	}
	n := float32(int32(t)) // round to nearest
	r := x - n*ln2hi - n*ln2lo
	p := float32(1.0 / 720)
	p = p*r + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	if n > 127 { // 2**128 is not a float32, but e**x may still be
		return p * 2 * math.Float32frombits(uint32(int32(n)+126)<<23)
	}
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// TestVectorMatchesScalar compares the vector kernels with the scalar
// ones they replaced, on activations of a model's sizes: rmsnorm within
// 1 float32 step (only the order of a float64 sum differs), swiglu within
// a few steps (two exps, each within 3 of the truth); softmax, whose sum
// the scalar kernel took in another order, against float64 arithmetic.
func TestVectorMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{5, 64, 288, 513, 768, 3072} {
		x, w := randVec(rng, n, 2), randVec(rng, n, 1)
		a, b := make([]float32, n), make([]float32, n)
		rmsnorm(a, x, w, 1e-5)
		rmsnormScalar(b, x, w, 1e-5)
		for i := range a {
			if u := ulps(a[i], float64(b[i])); u > 1 {
				t.Fatalf("n=%d: rmsnorm [%d] = %v, scalar %v", n, i, a[i], b[i])
			}
		}
		// softmax: both against float64 arithmetic on the same scaled
		// inputs; the vector kernel's eight-lane sum is the more exact.
		copy(a, x)
		copy(b, x)
		scaleSoftmax(a, 0.125)
		scaleSoftmaxScalar(b, 0.125)
		exact := make([]float64, n)
		var sum float64
		mx := math.Inf(-1)
		for i := range x {
			mx = max(mx, float64(x[i]*0.125))
		}
		for i := range x {
			exact[i] = math.Exp(float64(x[i]*0.125) - mx)
			sum += exact[i]
		}
		var worstVec, worstScalar float64
		for i := range a {
			worstVec = max(worstVec, ulps(a[i], exact[i]/sum))
			worstScalar = max(worstScalar, ulps(b[i], exact[i]/sum))
		}
		if worstVec > 6 {
			t.Errorf("n=%d: softmax off by %.1f ulp (scalar: %.1f)", n, worstVec, worstScalar)
		}
		t.Logf("n=%d: softmax worst %.1f ulp, scalar %.1f", n, worstVec, worstScalar)
		copy(a, x)
		copy(b, x)
		swiglu(a, w)
		swigluScalar(b, w)
		for i := range a {
			if u := ulps(a[i], float64(b[i])); u > 6 {
				t.Fatalf("n=%d: swiglu [%d] = %v, scalar %v (%.1f ulp)", n, i, a[i], b[i], u)
			}
		}
	}
}

// BenchmarkSerialKernels measures the vector kernels beside the scalar
// ones they replaced, in one run (compare within a run: ratios), at a
// 125M model's sizes (dim 768, ffn 3072) and attention lengths 64, 512.
func BenchmarkSerialKernels(b *testing.B) {
	rng := rand.New(rand.NewPCG(15, 16))
	x, w := randVec(rng, 3072, 2), randVec(rng, 3072, 1)
	buf, dst := make([]float32, 3072), make([]float32, 768)
	b.Run("rmsnorm768/vec", func(b *testing.B) {
		for b.Loop() {
			rmsnorm(dst, x[:768], w[:768], 1e-5)
		}
	})
	b.Run("rmsnorm768/scalar", func(b *testing.B) {
		for b.Loop() {
			rmsnormScalar(dst, x[:768], w[:768], 1e-5)
		}
	})
	for _, n := range []int{64, 512} {
		name := map[int]string{64: "softmax64", 512: "softmax512"}[n]
		b.Run(name+"/vec", func(b *testing.B) {
			for b.Loop() {
				copy(buf, x[:n])
				scaleSoftmax(buf[:n], 0.125)
			}
		})
		b.Run(name+"/scalar", func(b *testing.B) {
			for b.Loop() {
				copy(buf, x[:n])
				scaleSoftmaxScalar(buf[:n], 0.125)
			}
		})
	}
	b.Run("swiglu3072/vec", func(b *testing.B) {
		for b.Loop() {
			copy(buf, x)
			swiglu(buf, w)
		}
	})
	b.Run("swiglu3072/go-twin", func(b *testing.B) {
		for b.Loop() {
			copy(buf, x)
			swigluGo(buf, w)
		}
	})
	b.Run("swiglu3072/scalar", func(b *testing.B) {
		for b.Loop() {
			copy(buf, x)
			swigluScalar(buf, w)
		}
	})
}
