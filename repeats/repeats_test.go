package repeats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTQuantileByTable(t *testing.T) {
	// Two-sided 95 % critical values from any t table.
	for _, c := range []struct{ df, want float64 }{{1, 12.706}, {2, 4.303}, {4, 2.776}, {9, 2.262}, {29, 2.045}, {1e6, 1.960}} {
		if got := TQuantile(0.975, c.df); math.Abs(got-c.want) > 0.0015 {
			t.Errorf("t(0.975, %g) = %.4f, want %.3f", c.df, got, c.want)
		}
	}
}

func TestSummarizeByHand(t *testing.T) {
	s := Summarize([]float64{10, 12, 14})
	// mean 12, sd 2, CV 1/6, half-width 4.303 · 2 / √3 = 4.969.
	if s.N != 3 || s.Mean != 12 || math.Abs(s.SD-2) > 1e-12 || math.Abs(s.CV-1.0/6) > 1e-12 {
		t.Errorf("summary %+v", s)
	}
	if half := (s.CIHigh - s.CILow) / 2; math.Abs(half-4.969) > 0.002 {
		t.Errorf("half-width %.4f, want 4.969", half)
	}
	if one := Summarize([]float64{5}); one.CILow != 5 || one.CIHigh != 5 || one.SD != 0 {
		t.Errorf("one value: %+v", one)
	}
}

// TestIntervalCoverage draws 2000 samples of K normal values with a known
// mean and variance: about 95 % of their intervals must cover the mean.
// With 2000 intervals the count of covering ones is binomial with sd
// √(2000·0.95·0.05) ≈ 9.7: a tolerance of 4 sd (±39) fails a correct
// interval about once in 16,000 seeds, while a z-interval (1.96 in place
// of t) at K = 5 covers about 88 % (1760) and fails.
func TestIntervalCoverage(t *testing.T) {
	const trials, mu, sigma = 2000, 120.0, 15.0
	for _, k := range []int{3, 5, 10} {
		rng := rand.New(rand.NewPCG(42, uint64(k)))
		covered := 0
		for range trials {
			xs := make([]float64, k)
			for i := range xs {
				xs[i] = mu + sigma*rng.NormFloat64()
			}
			if s := Summarize(xs); s.CILow <= mu && mu <= s.CIHigh {
				covered++
			}
		}
		want, tol := 0.95*trials, 4*math.Sqrt(trials*0.95*0.05)
		if math.Abs(float64(covered)-want) > tol {
			t.Errorf("K=%d: %d of %d intervals cover the mean, want %.0f ± %.0f", k, covered, trials, want, tol)
		}
	}
}

// TestWelchSize checks Welch's test on two sets of one normal law with
// unequal sample sizes: about 5 % of 2000 pairs reject at 0.05; and its
// power against a shift of 2 sd with K = 6 a side: the noncentral t
// (δ = 2/√(2/6) ≈ 3.46, about 10 df) gives about 0.87.
func TestWelchSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	draw := func(n int, mu, sd float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = mu + sd*rng.NormFloat64()
		}
		return xs
	}
	const trials = 2000
	rejected, found := 0, 0
	for range trials {
		if _, _, p, ok := Welch(draw(5, 100, 10), draw(8, 100, 25)); ok && p < 0.05 {
			rejected++
		}
		if _, _, p, ok := Welch(draw(6, 100, 10), draw(6, 120, 10)); ok && p < 0.05 {
			found++
		}
	}
	want, tol := 0.05*trials, 4*math.Sqrt(trials*0.05*0.95)
	if math.Abs(float64(rejected)-want) > tol {
		t.Errorf("same law: %d of %d rejected at 0.05, want %.0f ± %.0f", rejected, trials, want, tol)
	}
	if power := float64(found) / trials; math.Abs(power-0.87) > 0.04 {
		t.Errorf("a 2 sd shift: found in %d of %d (%.3f), want a power of 0.87 ± 0.04", found, trials, power)
	}
	if _, _, _, ok := Welch([]float64{1}, []float64{1, 2}); ok {
		t.Error("one value a side was tested")
	}
}
