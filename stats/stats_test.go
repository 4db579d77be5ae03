package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestPercentileByHand(t *testing.T) {
	// numpy.percentile([1,2,3,4,10], q) with the default linear method.
	s := []float64{1, 2, 3, 4, 10}
	for _, tc := range []struct {
		p, want float64
	}{
		{0, 1}, {50, 3}, {90, 7.6}, {95, 8.8}, {99, 9.76}, {100, 10}, {25, 2}, {12.5, 1.5},
	} {
		if got := Percentile(s, tc.p); !near(got, tc.want) {
			t.Errorf("Percentile(%v, %v) = %v, want %v", s, tc.p, got, tc.want)
		}
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile(nil) = %v, want 0", got)
	}
	if got := Percentile([]float64{7}, 95); got != 7 {
		t.Errorf("Percentile([7], 95) = %v, want 7", got)
	}
}

func TestDescribeByHand(t *testing.T) {
	// Unsorted input; mean 4, sample variance ((3²+2²+1²+0²+6²)/4) = 12.5.
	d := Describe([]float64{10, 1, 3, 2, 4})
	want := Distribution{Count: 5, Mean: 4, Std: math.Sqrt(12.5), Min: 1, P50: 3, P90: 7.6, P95: 8.8, P99: 9.76, Max: 10}
	for _, f := range []string{"count", "mean", "std", "min", "p50", "p90", "p95", "p99", "max"} {
		g, _ := d.Field(f)
		w, _ := want.Field(f)
		if !near(g, w) {
			t.Errorf("%s = %v, want %v", f, g, w)
		}
	}
	if (Describe(nil) != Distribution{}) {
		t.Errorf("Describe(nil) = %+v, want zero", Describe(nil))
	}
	if d := Describe([]float64{5}); d.Std != 0 || d.P99 != 5 {
		t.Errorf("one value: %+v", d)
	}
}

func TestTokenMetrics(t *testing.T) {
	times := []int64{100, 130, 150, 210}
	g := Gaps(times)
	if len(g) != 3 || g[0] != 30 || g[1] != 20 || g[2] != 60 {
		t.Errorf("Gaps = %v, want [30 20 60]", g)
	}
	if v, ok := TPOT(times); !ok || !near(v, 110.0/3) {
		t.Errorf("TPOT = %v,%v want %v,true", v, ok, 110.0/3)
	}
	if _, ok := TPOT([]int64{5}); ok {
		t.Error("TPOT of one token is defined, want undefined")
	}
	if Gaps([]int64{1}) != nil {
		t.Error("Gaps of one token not nil")
	}
}

func TestVisible(t *testing.T) {
	d := Display{FrameHz: 100, BatchNS: 0} // 10 ms frames
	// Arrivals at 1, 9, 10, 31 ms: frames at 10, 10, 10, 40 ms.
	ms := int64(1_000_000)
	got := d.Visible([]int64{1 * ms, 9 * ms, 10 * ms, 31 * ms})
	want := []int64{10 * ms, 10 * ms, 10 * ms, 40 * ms}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Visible = %v, want %v", got, want)
		}
	}
	gaps := d.VisibleGaps([]int64{1 * ms, 9 * ms, 10 * ms, 31 * ms})
	if len(gaps) != 1 || gaps[0] != 30*ms {
		t.Errorf("VisibleGaps = %v, want [30ms]", gaps)
	}
	// The batching window delays painting: arrival 1 ms + 16 ms → frame at 20 ms.
	d2 := Display{FrameHz: 100, BatchNS: 16 * ms}
	if v := d2.Visible([]int64{1 * ms}); v[0] != 20*ms {
		t.Errorf("batched Visible = %v, want 20ms", v[0])
	}
}

func TestNearestIndex(t *testing.T) {
	for _, tc := range []struct {
		n    int
		p    float64
		want int
	}{{0, 50, -1}, {1, 95, 0}, {12, 95, 10}, {12, 99, 11}, {12, 50, 6}, {12, 0, 0}, {12, 100, 11}, {12, 150, 11}, {20, 95, 18}} {
		if got := NearestIndex(tc.n, tc.p); got != tc.want {
			t.Errorf("NearestIndex(%d, %g) = %d, want %d", tc.n, tc.p, got, tc.want)
		}
	}
}

// TestVisibleDefaultRate: a display without a rate takes DefaultDisplay's
// (Visible wrote its own 60).
func TestVisibleDefaultRate(t *testing.T) {
	saved := DefaultDisplay
	t.Cleanup(func() { DefaultDisplay = saved })
	DefaultDisplay = Display{FrameHz: 100}
	if got := (Display{}).Visible([]int64{1}); got[0] != 10_000_000 {
		t.Errorf("visible at %d ns, want the first 100 Hz frame, 10 ms", got[0])
	}
	if ms := (Display{BatchNS: 16_500_000}).BatchMS(); ms != 16.5 {
		t.Errorf("BatchMS = %v, want 16.5", ms)
	}
}
