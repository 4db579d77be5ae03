package compare

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/repeats"
)

// set is a repeats set with the given values of ttft.p95 and
// requests_per_s.
func set(ttft, rps []float64) *repeats.Set {
	s := &repeats.Set{Runs: make([]string, len(ttft))}
	s.Figures = []repeats.Figure{
		{Name: "ttft.p95", Unit: "ms", Values: ttft, Summary: repeats.Summarize(ttft)},
		{Name: "requests_per_s", Unit: "/s", Values: rps, Summary: repeats.Summarize(rps)},
	}
	return s
}

func TestRepeatsDirection(t *testing.T) {
	base := set([]float64{100, 102, 98, 101}, []float64{10, 10.2, 9.9, 10.1})
	worse := set([]float64{140, 143, 138, 141}, []float64{7, 7.1, 6.9, 7.05})
	better := set([]float64{70, 71, 69, 70.5}, []float64{13, 13.1, 12.9, 13.2})
	status := func(r Report) map[string]Status {
		m := map[string]Status{}
		for _, c := range r.Changes {
			m[c.Metric] = c.Status
		}
		return m
	}
	opts := DefaultOptions()
	if got := status(Repeats(base, worse, opts)); got["ttft.p95"] != StatusRegressed || got["requests_per_s"] != StatusRegressed {
		t.Errorf("slower and fewer requests/s: %v, want both regressed", got)
	}
	if got := status(Repeats(base, better, opts)); got["ttft.p95"] != StatusImproved || got["requests_per_s"] != StatusImproved {
		t.Errorf("faster and more requests/s: %v, want both improved", got)
	}
	if got := status(Repeats(base, base, opts)); got["ttft.p95"] != StatusWithin {
		t.Errorf("a set against itself: %v", got)
	}
	// A large but noisy change is not significant with 3 runs a side.
	noisy := set([]float64{60, 200, 130}, []float64{10, 10, 10})
	if got := status(Repeats(set([]float64{100, 101, 99}, []float64{10, 10, 10}), noisy, opts)); got["ttft.p95"] != StatusNotSignificant {
		t.Errorf("noisy: %v, want not significant", got)
	}
	one := set([]float64{100}, []float64{10})
	if got := status(Repeats(one, worse, opts)); got["ttft.p95"] != StatusTooFew {
		t.Errorf("one run a side: %v, want too few", got)
	}
}

// TestRepeatsToleranceByKind: a p95 is held to the tail tolerance in a
// comparison of repeats as in one of single runs or noise bands (Repeats
// held every figure to the flat Tolerance: a significant +15 % of
// ttft.p95 was a regression there and within tolerance everywhere else).
func TestRepeatsToleranceByKind(t *testing.T) {
	mk := func(vs []float64) *repeats.Set {
		return &repeats.Set{Runs: make([]string, len(vs)), Figures: []repeats.Figure{
			{Name: "ttft.p50", Unit: "ms", Values: vs, Summary: repeats.Summarize(vs)},
			{Name: "ttft.p95", Unit: "ms", Values: vs, Summary: repeats.Summarize(vs)},
		}}
	}
	base, cur := mk([]float64{100, 101, 99, 100}), mk([]float64{115, 116, 114, 115})
	opts := DefaultOptions()
	got := map[string]Change{}
	for _, c := range Repeats(base, cur, opts).Changes {
		got[c.Metric] = c
	}
	if c := got["ttft.p50"]; c.Status != StatusRegressed || c.Tolerance != opts.Tolerance {
		t.Errorf("ttft.p50 +15%%: %q at tolerance %g, want %q at %g", c.Status, c.Tolerance, StatusRegressed, opts.Tolerance)
	}
	if c := got["ttft.p95"]; c.Status != StatusWithin || c.Tolerance != opts.ToleranceFor("ttft.p95") {
		t.Errorf("ttft.p95 +15%%: %q at tolerance %g, want %q at %g", c.Status, c.Tolerance, StatusWithin, opts.ToleranceFor("ttft.p95"))
	}
}
