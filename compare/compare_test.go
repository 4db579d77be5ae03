package compare

import (
	"bytes"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestMannWhitneyNoTies(t *testing.T) {
	// x = 1..5, y = 6..10: R1 = 15, U1 = 15 − 15 = 0, U = 25, μ = 12.5,
	// σ² = 25/12 · 11 = 275/12, z = (25 − 12.5 − 0.5)/σ = 12/√(275/12)
	// ≈ 2.5067; p = 2(1 − Φ(z)) ≈ 0.01219 (R: wilcox.test(1:5, 6:10,
	// exact = FALSE) prints p-value = 0.01219).
	u, p := MannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if u != 0 {
		t.Errorf("U: got %v, want 0", u)
	}
	want := math.Erfc(12 / math.Sqrt(275.0/12) / math.Sqrt2)
	if math.Abs(p-want) > 1e-12 || math.Abs(p-0.01219) > 5e-5 {
		t.Errorf("p: got %v, want %v (≈ 0.01219)", p, want)
	}
	// The test is symmetric in its samples.
	if _, p2 := MannWhitney([]float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}); math.Abs(p2-p) > 1e-15 {
		t.Errorf("swapped p: got %v, want %v", p2, p)
	}
}

func TestMannWhitneyTies(t *testing.T) {
	// x = 1 2 2, y = 2 3 4. Pooled 1 2 2 2 3 4: ranks 1, 3 3 3, 5, 6.
	// R1 = 1+3+3 = 7, U1 = 7 − 6 = 1, U = 9 − 1 = 8, μ = 4.5.
	// One tie group of 3: Σ(t³−t) = 24; σ² = 9/12 · (7 − 24/30) = 4.65.
	// z = (8 − 4.5 − 0.5)/√4.65 ≈ 1.3912, p ≈ 0.1642.
	u, p := MannWhitney([]float64{1, 2, 2}, []float64{2, 3, 4})
	if u != 1 {
		t.Errorf("U: got %v, want 1", u)
	}
	want := math.Erfc(3 / math.Sqrt(4.65) / math.Sqrt2)
	if math.Abs(p-want) > 1e-12 || math.Abs(p-0.1642) > 5e-4 {
		t.Errorf("p: got %v, want %v (≈ 0.1642)", p, want)
	}
}

func TestMannWhitneyDegenerate(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
	}{
		{"empty x", nil, []float64{1, 2}},
		{"all tied", []float64{3, 3, 3}, []float64{3, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, p := MannWhitney(tc.x, tc.y); p != 1 {
				t.Errorf("p: got %v, want 1", p)
			}
		})
	}
}

func TestFisherExact(t *testing.T) {
	// Fisher's tea tasting table [[3, 1], [1, 3]]: tables with a = 0..4
	// have probabilities 1, 16, 36, 16, 1 over 70; those no more likely
	// than a = 3 (16/70) are a = 0, 1, 3, 4: p = 34/70 ≈ 0.4857.
	if got, want := FisherExact(3, 1, 1, 3), 34.0/70; math.Abs(got-want) > 1e-9 {
		t.Errorf("got %v, want %v", got, want)
	}
	// [[0, 10], [10, 0]]: only it and its mirror are that extreme:
	// p = 2/C(20, 10) = 2/184756.
	if got, want := FisherExact(0, 10, 10, 0), 2.0/184756; math.Abs(got-want) > 1e-12 {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := FisherExact(0, 50, 0, 50); got != 1 {
		t.Errorf("no errors on either side: got %v, want 1", got)
	}
}

// synth builds a run of n warm requests in two categories plus one cold
// request, with TTFTs near ttftMS and gaps near itlMS (log-normal jitter of
// about 15 %), from a seeded generator.
func synth(seed uint64, n int, ttftMS, itlMS float64) *runfile.Run {
	rng := rand.New(rand.NewPCG(seed, 0x7e57))
	run := &runfile.Run{SchemaVersion: 1, Target: runfile.Target{URL: "http://mock", Model: "m"}, Device: runfile.Device{Hostname: "host"}}
	mk := func(i int, cat string, cold bool) runfile.Request {
		t := int64((ttftMS + rng.NormFloat64()*ttftMS*0.1) * 1e6)
		times := []int64{t}
		for range 60 {
			t += int64(itlMS * math.Exp(rng.NormFloat64()*0.15) * 1e6)
			times = append(times, t)
		}
		return runfile.Request{Index: i, Category: cat, Cold: cold, Status: 200, TTFTNS: times[0], E2ENS: t + 2e6,
			OutputTokens: len(times), ContentEvents: len(times), TokenTimesNS: times}
	}
	run.Requests = append(run.Requests, mk(0, "short", true))
	for i := 1; i <= n; i++ {
		cat := "short"
		if i%2 == 0 {
			cat = "long"
		}
		run.Requests = append(run.Requests, mk(i, cat, false))
	}
	return run
}

func TestSameDistributionIsNotFlagged(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		base, cur := synth(seed, 40, 150, 20), synth(seed+100, 40, 150, 20)
		rep := Runs(base, cur, DefaultOptions())
		if rep.Regressed() {
			var b bytes.Buffer
			rep.WriteText(&b)
			t.Errorf("seed %d: two runs of one profile flagged as a regression:\n%s", seed, b.String())
		}
	}
}

func TestGapShiftIsFlagged(t *testing.T) {
	base, cur := synth(1, 40, 150, 20), synth(2, 40, 150, 30)
	rep := Runs(base, cur, DefaultOptions())
	if !rep.Regressed() {
		t.Fatal("20 ms → 30 ms gaps not flagged")
	}
	got := map[string]Status{}
	for _, c := range rep.Changes {
		got[c.Scope+" "+c.Metric] = c.Status
	}
	for _, key := range []string{"overall gap.p50", "overall gap.p95", "overall tpot.mean", "overall e2e.p95", "category:long gap.p50", "category:short gap.p95", "overall gap.max"} {
		if got[key] != StatusRegressed {
			t.Errorf("%s: got %q, want %q", key, got[key], StatusRegressed)
		}
	}
	// TTFT did not move: never a regression.
	for _, key := range []string{"overall ttft.p50", "overall ttft.p95"} {
		if got[key] == StatusRegressed {
			t.Errorf("%s: flagged although TTFT did not change", key)
		}
	}
	// The cold scope has one request a side: one value per request is
	// too few to test, for its TTFT and for its 60 gaps alike (they are
	// one request's, not 60 independent observations).
	for _, key := range []string{"cold ttft.p50", "cold gap.p50", "cold gap.max"} {
		if got[key] != StatusTooFew {
			t.Errorf("%s: got %q, want %q", key, got[key], StatusTooFew)
		}
	}
	// The reverse direction is an improvement, not a regression.
	if back := Runs(cur, base, DefaultOptions()); back.Regressed() {
		t.Error("30 ms → 20 ms flagged as a regression")
	}
}

func TestToleranceHidesSmallSignificantChange(t *testing.T) {
	// 20 → 21 ms is a 5 % shift: with 40 requests a side, each its own
	// gap p50 over 60 gaps, it is significant, but within the 10 %
	// tolerance.
	rep := Runs(synth(3, 40, 150, 20), synth(4, 40, 150, 21), DefaultOptions())
	for _, c := range rep.Changes {
		if c.Scope == "overall" && c.Metric == "gap.p50" {
			if c.P >= 0.01 {
				t.Errorf("p = %v; the test should see a 5 %% shift in 40 requests of steady pace", c.P)
			}
			if c.Status != StatusWithin {
				t.Errorf("status: got %q, want %q", c.Status, StatusWithin)
			}
		}
	}
	if rep.Regressed() {
		t.Error("a 5 % change was flagged with a 10 % tolerance")
	}
	opts := DefaultOptions()
	opts.Tolerance, opts.TailTolerance, opts.ExtremeTolerance = 0.02, 0.02, 0.02
	if !Runs(synth(3, 40, 150, 20), synth(4, 40, 150, 21), opts).Regressed() {
		t.Error("a 5 % change was not flagged with a 2 % tolerance")
	}
}

func TestErrorRate(t *testing.T) {
	base, cur := synth(5, 40, 150, 20), synth(6, 40, 150, 20)
	for i := 1; i <= 20; i++ {
		cur.Requests[i].Error, cur.Requests[i].Status = "http 503", 503
	}
	rep := Runs(base, cur, DefaultOptions())
	for _, c := range rep.Changes {
		if c.Scope == "overall" && c.Metric == "errors.rate" {
			if c.Base != 0 || c.New != 50 || c.Status != StatusRegressed {
				t.Errorf("got %+v, want 0%% → 50%% regressed", c)
			}
			return
		}
	}
	t.Fatal("no overall errors.rate change")
}

func TestWriteTextMarksRegressions(t *testing.T) {
	base, cur := synth(1, 40, 150, 20), synth(2, 40, 150, 30)
	cur.Requests = append(cur.Requests, runfile.Request{Index: 99, Category: "extra", Status: 200})
	var b bytes.Buffer
	rep := Runs(base, cur, DefaultOptions())
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"REGRESSION", "gap.p95", "category:long", `category "extra" is only in the new run`, "regression(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	lines := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "REGRESSION") {
			lines++
		}
	}
	if lines != len(rep.Regressions()) {
		t.Errorf("%d lines marked, want %d", lines, len(rep.Regressions()))
	}
}

func TestNotesDifferentTargets(t *testing.T) {
	a, b := synth(1, 10, 150, 20), synth(2, 10, 150, 20)
	b.Target.Model, b.Device.Label = "other", "Pixel 8"
	rep := Runs(a, b, DefaultOptions())
	if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "differ in model, device") {
		t.Errorf("notes: got %q, want the differing model and device named", rep.Notes)
	}
}

func BenchmarkMannWhitney(b *testing.B) {
	// A run's pooled gaps: 200 requests of 500 tokens a side.
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float64, 100_000), make([]float64, 100_000)
	for i := range x {
		x[i] = math.Round(20 * math.Exp(rng.NormFloat64()*0.2))
		y[i] = math.Round(21 * math.Exp(rng.NormFloat64()*0.2))
	}
	b.ResetTimer()
	for b.Loop() {
		MannWhitney(x, y)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)+len(y)), "ns/sample")
}

// withUncounted returns a copy of run with what no figure counts added:
// rapid-fire's interrupted answers (Aborted) and a warm-up request, all
// with extreme values (TTFT 9 s, gaps of 3 s), in every category.
func withUncounted(run *runfile.Run) *runfile.Run {
	out := *run
	out.Requests = slices.Clone(run.Requests)
	times := []int64{9e9, 12e9, 15e9, 18e9}
	for i, cat := range []string{"short", "long", "short", "long", "short", "long"} {
		out.Requests = append(out.Requests, runfile.Request{Index: 1000 + i, Category: cat, Aborted: true, Status: 200,
			TTFTNS: times[0], E2ENS: 60e9, OutputTokens: len(times), ContentEvents: len(times), TokenTimesNS: times})
	}
	out.Requests = append(out.Requests, runfile.Request{Index: 2000, Category: "short", Warmup: true, Status: 200,
		TTFTNS: times[0], E2ENS: 60e9, OutputTokens: len(times), ContentEvents: len(times), TokenTimesNS: times})
	return &out
}

func TestAbortedRequestsAreNotCompared(t *testing.T) {
	base, cur := synth(11, 40, 150, 20), withUncounted(synth(12, 40, 150, 20))
	rep := Runs(base, cur, DefaultOptions())
	if rep.Regressed() {
		var b bytes.Buffer
		rep.WriteText(&b)
		t.Errorf("aborted requests made a regression:\n%s", b.String())
	}
	counted := map[string]int{"overall": 40, "cold": 1, "category:short": 20, "category:long": 20}
	for _, c := range rep.Changes {
		// Every time figure of synth is under 2 s (E2E: 150 ms + 60
		// gaps of 20 ms); the aborted requests' are 3 s and more.
		if c.Unit == "ms" && c.New > 2000 {
			t.Errorf("%s %s: new = %v ms, an aborted request's value", c.Scope, c.Metric, c.New)
		}
		// One value per counted request, none of the aborted ones.
		if want := counted[c.Scope]; c.NNew != want {
			t.Errorf("%s %s: tested %d requests of the new run, want %d", c.Scope, c.Metric, c.NNew, want)
		}
	}
}

// TestFiguresAreTheSummary: every figure compare shows is the run's
// summary figure for that scope, measure.Group(run, scope), on runs with
// what a real run holds: a cold request, failures, aborted and warm-up
// requests, batched events counted from the server's usage, and a
// category on one side only.
func TestFiguresAreTheSummary(t *testing.T) {
	base, cur := synth(21, 40, 150, 20), withUncounted(synth(22, 40, 150, 24))
	for _, i := range []int{3, 8, 17} {
		cur.Requests[i].Error, cur.Requests[i].ErrorKind, cur.Requests[i].Status = "http 503", "http", 503
	}
	for i := 1; i < 40; i += 3 { // three tokens an event, known only from usage
		q := &cur.Requests[i]
		q.TokenSource, q.OutputTokens = "usage", 3*len(q.TokenTimesNS)
	}
	base.Requests = append(base.Requests, runfile.Request{Index: 99, Category: "only-base", Status: 200,
		TTFTNS: 1e8, E2ENS: 2e8, OutputTokens: 2, ContentEvents: 2, TokenTimesNS: []int64{1e8, 1.5e8}})
	rep := Runs(base, cur, DefaultOptions())

	figure := map[string]func(g runfile.Group) float64{
		"ttft.p50":    func(g runfile.Group) float64 { return g.TTFTMs.P50 },
		"ttft.p95":    func(g runfile.Group) float64 { return g.TTFTMs.P95 },
		"gap.p50":     func(g runfile.Group) float64 { return g.GapMs.P50 },
		"gap.p95":     func(g runfile.Group) float64 { return g.GapMs.P95 },
		"gap.max":     func(g runfile.Group) float64 { return g.GapMs.Max },
		"tpot.mean":   func(g runfile.Group) float64 { return g.TPOTMs.Mean },
		"e2e.p95":     func(g runfile.Group) float64 { return g.E2EMs.P95 },
		"errors.rate": func(g runfile.Group) float64 { return 100 * g.ErrorRate() },
	}
	seen := map[string]int{}
	for _, c := range rep.Changes {
		f, ok := figure[c.Metric]
		if !ok {
			t.Errorf("unexpected metric %q", c.Metric)
			continue
		}
		seen[c.Scope]++
		s, err := measure.ParseScope(c.Scope)
		if err != nil {
			t.Fatal(err)
		}
		if want := f(measure.Group(base, s)); c.Base != want {
			t.Errorf("%s %s: base = %v, summary shows %v", c.Scope, c.Metric, c.Base, want)
		}
		if want := f(measure.Group(cur, s)); c.New != want {
			t.Errorf("%s %s: new = %v, summary shows %v", c.Scope, c.Metric, c.New, want)
		}
	}
	want := map[string]int{"overall": len(figure), "cold": len(figure), "category:short": len(figure), "category:long": len(figure)}
	if !maps.Equal(seen, want) {
		t.Errorf("metrics per scope: got %v, want %v", seen, want)
	}
	if !slices.Contains(rep.Notes, `category "only-base" is only in the base run`) {
		t.Errorf("notes: got %q, want the base-only category named", rep.Notes)
	}
}

// TestWholeCategoryIsComparedOnce checks that a category holding every
// request (a suite of one category) is not compared again beside overall,
// while the categories of a suite of two are.
func TestWholeCategoryIsComparedOnce(t *testing.T) {
	scopesOf := func(rep Report) map[string]bool {
		seen := map[string]bool{}
		for _, c := range rep.Changes {
			seen[c.Scope] = true
		}
		return seen
	}
	two := scopesOf(Runs(synth(1, 20, 150, 20), synth(2, 20, 150, 20), DefaultOptions()))
	if !two["overall"] || !two["category:short"] || !two["category:long"] {
		t.Errorf("two categories: compared scopes %v, want overall and both categories", two)
	}
	oneCategory := func(run *runfile.Run) *runfile.Run {
		for i := range run.Requests {
			run.Requests[i].Category = "short"
		}
		return run
	}
	one := scopesOf(Runs(oneCategory(synth(1, 20, 150, 20)), oneCategory(synth(2, 20, 150, 20)), DefaultOptions()))
	if !one["overall"] || one["category:short"] {
		t.Errorf("one category: compared scopes %v, want overall alone", one)
	}
}
