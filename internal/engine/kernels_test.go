package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestExpf(t *testing.T) {
	cases := []float32{0, 1, -1, 0.5, -0.5, 10, -10, 30, -30, 80, -80, 88.5, -87, 1e-8, -1e-8}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		cases = append(cases, float32(rng.Float64()*170-86))
	}
	for _, x := range cases {
		got, want := float64(expf(x)), math.Exp(float64(x))
		if rel := math.Abs(got-want) / want; rel > 3e-7 {
			t.Errorf("expf(%v) = %v, want %v (relative error %.2g)", x, got, want, rel)
		}
	}
	edges := []struct{ x, want float32 }{{-100, 0}, {100, float32(math.Inf(1))}}
	for _, e := range edges {
		if got := expf(e.x); got != e.want {
			t.Errorf("expf(%v) = %v, want %v", e.x, got, e.want)
		}
	}
	if got := expf(float32(math.NaN())); got == got {
		t.Errorf("expf(NaN) = %v, want NaN", got)
	}
}

// TestKernelsAgainstReference checks the unrolled kernels against plain
// loops on odd lengths.
func TestKernelsAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 3, 7, 8, 9, 31, 64, 173} {
		vec := func() []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			return v
		}
		w, x0, x1, x2, x3 := vec(), vec(), vec(), vec(), vec()
		ref := func(a, b []float32) float64 {
			var s float64
			for i := range a {
				s += float64(a[i]) * float64(b[i])
			}
			return s
		}
		s0, s1, s2, s3 := dot4(w, x0, x1, x2, x3)
		for i, c := range []struct {
			got  float32
			want float64
		}{{dot(w, x0), ref(w, x0)}, {s0, ref(w, x0)}, {s1, ref(w, x1)}, {s2, ref(w, x2)}, {s3, ref(w, x3)}} {
			if math.Abs(float64(c.got)-c.want) > 1e-4*math.Sqrt(float64(n)) {
				t.Errorf("n=%d case %d: got %v, want %v", n, i, c.got, c.want)
			}
		}
		y := vec()
		want := make([]float64, n)
		for i := range y {
			want[i] = float64(y[i]) + 0.5*float64(x0[i])
		}
		axpy(y, 0.5, x0)
		for i := range y {
			if math.Abs(float64(y[i])-want[i]) > 1e-6 {
				t.Errorf("axpy n=%d [%d] = %v, want %v", n, i, y[i], want[i])
			}
		}
	}
}

func TestSoftmax(t *testing.T) {
	x := []float32{3, 1, -2, 0.5, -100, 3}
	want := make([]float64, len(x))
	var sum float64
	for i, v := range x {
		want[i] = math.Exp(float64(v) - 3)
		sum += want[i]
	}
	softmax(x)
	for i := range x {
		if w := want[i] / sum; math.Abs(float64(x[i])-w) > 1e-7 {
			t.Errorf("softmax[%d] = %v, want %v", i, x[i], w)
		}
	}
}
