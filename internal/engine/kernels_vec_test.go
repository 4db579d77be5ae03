package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps returns how many float32 steps at want lie between got and want.
func ulps(got float32, want float64) float64 {
	w := float32(want)
	if w == 0 {
		return math.Abs(float64(got)) / float64(math.SmallestNonzeroFloat32)
	}
	step := float64(math.Nextafter32(abs32(w), float32(math.Inf(1))) - abs32(w))
	return math.Abs(float64(got)-want) / step
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// expUlpBound is the error of the vector exp (Go twin and assembly) in
// float32 steps of the exact e**x, over its range (measured: 2.85 for the
// twin, 2.67 for the assembly, which fuses its multiply-adds).
const expUlpBound = 3

// expCases returns points across the vector exp's range, its edges and
// random points, with e**x a normal float32.
func expCases() []float32 {
	xs := []float32{0, 1, -1, 0.5, -0.5, 1e-8, -1e-8, 0.34657359, -0.34657359, 10, -10, 30, -30, 80, -80, -87, 88, 88.37, -87.33}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 200000; i++ {
		xs = append(xs, float32(rng.Float64()*(88.37+87.3)-87.3))
	}
	for i := 0; i < 20000; i++ {
		xs = append(xs, float32(rng.NormFloat64()))
	}
	return xs
}

func TestExpVec(t *testing.T) {
	worst := 0.0
	for _, x := range expCases() {
		u := ulps(expVec(x), math.Exp(float64(x)))
		worst = max(worst, u)
		if u > expUlpBound {
			t.Errorf("expVec(%v) = %v, want %v (%.2f ulp)", x, expVec(x), math.Exp(float64(x)), u)
		}
	}
	t.Logf("expVec: worst %.2f ulp", worst)
	for _, x := range []float32{-87.34, -100, -1e30, float32(math.Inf(-1))} {
		if got := expVec(x); got != 0 {
			t.Errorf("expVec(%v) = %v, want 0", x, got)
		}
	}
	// Above the range the input is clamped: a large finite value.
	if got, want := expVec(1000), expVec(expHi); got != want || math.IsInf(float64(got), 0) {
		t.Errorf("expVec(1000) = %v, want expVec(%v) = %v, finite", got, expHi, want)
	}
}

// TestExpAsm holds the assembly's exp (through expSum with mx = 0, the
// softmax loop) to the same bound, in groups of eight and with a tail.
func TestExpAsm(t *testing.T) {
	xs := expCases()
	got := append([]float32(nil), xs...)
	expSum(got, 0)
	worst := 0.0
	for i, x := range xs {
		u := ulps(got[i], math.Exp(float64(x)))
		worst = max(worst, u)
		if u > expUlpBound {
			t.Fatalf("exp(%v) = %v, want %v (%.2f ulp)", x, got[i], math.Exp(float64(x)), u)
		}
	}
	t.Logf("exp (vector path, hasVec=%v): worst %.2f ulp", hasVec, worst)
}

// twinLengths covers the assembly alone (multiples of 8), the Go tail
// alone (below 8) and both.
var twinLengths = []int{1, 3, 7, 8, 9, 16, 31, 64, 173, 768, 3072}

func randVec(rng *rand.Rand, n int, sd float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * sd)
	}
	return v
}

// checkSwiglu compares swiglu (the assembly where there is one) with its
// Go twin on gate, up: within 4 ulp of each other (two exps within 3 ulp
// of the truth, fused or not, then a division and a product) or 1e-30
// apart (results rounded towards 0 where e**-g is clamped).
func checkSwiglu(t *testing.T, gate, up []float32) {
	t.Helper()
	got := append([]float32(nil), gate...)
	want := append([]float32(nil), gate...)
	swiglu(got, up)
	swigluGo(want, up)
	for i := range got {
		if u := ulps(got[i], float64(want[i])); u > 4 && math.Abs(float64(got[i]-want[i])) > 1e-30 {
			t.Fatalf("n=%d: swiglu(%v, %v) = %v, twin %v (%.1f ulp)", len(gate), gate[i], up[i], got[i], want[i], u)
		}
	}
}

func TestSerialKernelsTwins(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range twinLengths {
		for _, sd := range []float64{0.1, 3, 40} {
			checkSwiglu(t, randVec(rng, n, sd), randVec(rng, n, 1))

			// softmax: the max exactly, the sum and each weight within
			// a few float32 steps (eight-lane sums in both; the exps
			// differ only by fusing).
			x := randVec(rng, n, sd)
			a, b := append([]float32(nil), x...), append([]float32(nil), x...)
			if ma, mb := scaleMax(a, 0.125), scaleMaxGo(b, 0.125); ma != mb {
				t.Fatalf("n=%d: scaleMax = %v, twin %v", n, ma, mb)
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("n=%d: scaled [%d] = %v, twin %v", n, i, a[i], b[i])
				}
			}
			scaleSoftmax(a, 1)
			mx := scaleMaxGo(b, 1)
			sum := expSumGo(b, mx)
			scaleGo(b, 1/sum)
			var total float64
			for i := range a {
				total += float64(a[i])
				if u := ulps(a[i], float64(b[i])); u > 8 && math.Abs(float64(a[i]-b[i])) > 1e-30 {
					t.Fatalf("n=%d: softmax [%d] = %v, twin %v (%.1f ulp)", n, i, a[i], b[i], u)
				}
			}
			if math.Abs(total-1) > 1e-5 {
				t.Fatalf("n=%d: softmax sums to %v", n, total)
			}

			// rmsnorm's parts: the sum of squares in the same lanes and
			// order, so equal whenever the assembly covers all of x; the
			// scaling exactly.
			ssA, ssB := sumSquares(x), sumSquaresGo(x)
			if n%8 == 0 && ssA != ssB || math.Abs(ssA-ssB) > 1e-12*ssB {
				t.Fatalf("n=%d: sumSquares = %v, twin %v", n, ssA, ssB)
			}
			w := randVec(rng, n, 1)
			da, db := make([]float32, n), make([]float32, n)
			scaleMul(da, x, w, 0.37)
			scaleMulGo(db, x, w, 0.37)
			for i := range da {
				if da[i] != db[i] {
					t.Fatalf("n=%d: scaleMul [%d] = %v, twin %v", n, i, da[i], db[i])
				}
			}
		}
	}
}

// TestSwigluValues checks swiglu against float64 arithmetic, so that the
// twins cannot agree on a wrong formula.
func TestSwigluValues(t *testing.T) {
	gate := []float32{0, 1, -1, 2.5, -2.5, 10, -10, 20, -20, 87, -87, 100, -100, 0.001}
	up := make([]float32, len(gate))
	for i := range up {
		up[i] = float32(i) - 5.5
	}
	got := append([]float32(nil), gate...)
	swiglu(got, up)
	for i, g := range gate {
		want := float64(g) / (1 + math.Exp(-float64(g))) * float64(up[i])
		if math.Abs(float64(got[i])-want) > 4e-7*math.Abs(want)+1e-30 {
			t.Errorf("swiglu(%v, %v) = %v, want %v", g, up[i], got[i], want)
		}
	}
}

// FuzzSwiglu holds the assembly and its twin together on arbitrary
// finite gate and up values (x is spread over 9 lanes, a group of 8 and
// a tail).
func FuzzSwiglu(f *testing.F) {
	f.Add(float32(0.5), float32(-3), float32(1))
	f.Add(float32(-90), float32(88.5), float32(-1e-3))
	f.Fuzz(func(t *testing.T, a, b, u float32) {
		if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) || math.IsNaN(float64(u)) ||
			math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) || math.Abs(float64(u)) > 1e30 {
			t.Skip("not finite, or up so large that the product overflows")
		}
		gate := []float32{a, b, a * 0.5, -a, b * 2, -b, a + b, a - b, a * b}
		up := []float32{u, u, -u, u * 2, 1, u, -1, u, 0.5}
		checkSwiglu(t, gate, up)
	})
}
