package measure

import (
	"math"
	"testing"
)

func TestInFlightBuckets(t *testing.T) {
	// One request at a time, back to back with gaps of 1 ms every 100 ms
	// over 1 s: each bucket of 0.25 s is one in flight at most and a
	// little under one on average.
	var steps []Step
	for k := range 10 {
		at := float64(k) * 0.1
		steps = append(steps, Step{AtS: at, N: 1}, Step{AtS: at + 0.099, N: 0})
	}
	b := InFlightBuckets(steps, 4)
	if len(b) != 4 || b[3].ToS != steps[len(steps)-1].AtS {
		t.Fatalf("buckets %+v", b)
	}
	area := 0.0
	for _, x := range b {
		if x.Max != 1 || x.Mean < 0.98 || x.Mean > 1 {
			t.Errorf("bucket %+v: want max 1 and mean just under 1", x)
		}
		area += x.Mean * (x.ToS - x.FromS)
	}
	// The time-weighted total is the requests' time in flight: 10 × 99 ms.
	if math.Abs(area-0.99) > 1e-9 {
		t.Errorf("area %g, want 0.99", area)
	}
	// A burst of 3 shorter than a bucket still shows in its max.
	b = InFlightBuckets([]Step{{0, 1}, {0.5, 3}, {0.501, 1}, {2, 0}}, 2)
	if b[0].Max != 3 || b[1].Max != 1 {
		t.Errorf("burst: %+v", b)
	}
	if InFlightBuckets([]Step{{0, 0}}, 4) != nil || InFlightBuckets(steps, 0) != nil {
		t.Error("no span or no bucket: want nil")
	}
}
