package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// profile builds a run of n warm requests ("chat") of tokens tokens each,
// one token per event, as a real target produces them: each request has
// its own pace, its ITL itlMS times a request-level factor exp(N(0, 0.15))
// (another prompt, another batch, another thermal state), and each gap a
// small jitter exp(N(0, 0.05)) around that pace; TTFT is ttftMS ·
// exp(N(0, 0.2)). The gaps of one request are therefore correlated: they
// share its factor.
func profile(seed uint64, n, tokens int, ttftMS, itlMS float64) *runfile.Run {
	rng := rand.New(rand.NewPCG(seed, 0x9a95))
	run := &runfile.Run{SchemaVersion: 1, Target: runfile.Target{URL: "http://mock", Model: "m"}, Device: runfile.Device{Hostname: "host"}}
	for i := range n {
		t := int64(ttftMS * math.Exp(rng.NormFloat64()*0.2) * 1e6)
		pace := itlMS * math.Exp(rng.NormFloat64()*0.15)
		times := []int64{t}
		for range tokens - 1 {
			t += int64(pace * math.Exp(rng.NormFloat64()*0.05) * 1e6)
			times = append(times, t)
		}
		run.Requests = append(run.Requests, runfile.Request{Index: i, Category: "chat", Status: 200,
			TTFTNS: times[0], E2ENS: t + 2e6, OutputTokens: tokens, ContentEvents: tokens, TokenTimesNS: times})
	}
	return run
}

// samePairs is the number of same-profile pairs of runs the calibration
// tests draw; pair i is profile(2i+1) against profile(2i+2).
const samePairs = 40

func samePair(i int) (base, cur *runfile.Run) {
	return profile(uint64(2*i+1), 30, 40, 150, 20), profile(uint64(2*i+2), 30, 40, 150, 20)
}

// pooledGapP is the test compare used to run on gap.p50 and gap.p95:
// Mann-Whitney on every gap of every request of the overall scope, pooled,
// as if the gaps were independent.
func pooledGapP(base, cur *runfile.Run) float64 {
	_, p := MannWhitney(measure.Sample(measure.Views(base, measure.Overall), measure.Gap),
		measure.Sample(measure.Views(cur, measure.Overall), measure.Gap))
	return p
}

// TestSameProfileIsNotSignificant draws 40 pairs of runs of one profile:
// there is no difference to find, so a valid test at α = 0.01 calls about
// 0.4 of the 40 gap comparisons significant (3 or more has probability
// < 1 %), and compare may flag a regression in at most 2 pairs.
//
// The pooled test compare used before calls most of these pairs
// significant: with 30 requests of 39 gaps it sees 1170 "independent"
// gaps a side, while what varies from run to run is mostly the pace of
// each of 30 requests. Its p-values are far too small; that the tolerance
// often hid the false alarms did not make the test right.
func TestSameProfileIsNotSignificant(t *testing.T) {
	opts := DefaultOptions()
	var regressed, pooled int
	significant := map[string]int{}
	for i := range samePairs {
		base, cur := samePair(i)
		rep := Runs(base, cur, opts)
		for _, c := range rep.Changes {
			if c.Scope != "overall" {
				continue
			}
			if c.P < opts.Alpha {
				significant[c.Metric]++
			}
			if c.Metric == "gap.p50" && c.NBase != 30 {
				t.Fatalf("gap.p50 tested on %d values a side, want 30 (one per request)", c.NBase)
			}
		}
		if rep.Regressed() {
			regressed++
			t.Logf("pair %d flagged: %v", i, rep.Regressions())
		}
		if pooledGapP(base, cur) < opts.Alpha {
			pooled++
		}
	}
	t.Logf("of %d same-profile pairs: pooled gap test p < %g in %d; per-request tests p < %g: %v; regressions flagged: %d",
		samePairs, opts.Alpha, pooled, opts.Alpha, significant, regressed)
	if regressed > 2 {
		t.Errorf("%d of %d same-profile pairs flagged a regression, want at most 2", regressed, samePairs)
	}
	for _, m := range []string{"gap.p50", "gap.p95", "gap.max", "tpot.mean", "ttft.p50", "e2e.p95"} {
		if significant[m] > 2 {
			t.Errorf("%s: p < %g in %d of %d same-profile pairs, want at most 2", m, opts.Alpha, significant[m], samePairs)
		}
	}
	// Why the test changed: the pooled test is wrong on these runs.
	if pooled <= 2 {
		t.Errorf("pooled gap test p < %g in only %d of %d pairs; this test no longer shows why compare tests per request", opts.Alpha, pooled, samePairs)
	}
}

// perRequestGapPct returns each successful request's own p-th percentile
// of its gaps, written here apart from compare's code.
func perRequestGapPct(run *runfile.Run, p float64) []float64 {
	var out []float64
	for _, v := range measure.Views(run, measure.Overall) {
		if g := v.Values(measure.Gap); len(g) > 0 {
			out = append(out, stats.Percentile(slices.Sorted(slices.Values(g)), p))
		}
	}
	return out
}

// TestSlowdownIsFlaggedPerRequest: ITL 20 → 30 ms on 30 requests a side is
// flagged, with each request one value in the test.
func TestSlowdownIsFlaggedPerRequest(t *testing.T) {
	base, cur := profile(1001, 30, 40, 150, 20), profile(1002, 30, 40, 150, 30)
	rep := Runs(base, cur, DefaultOptions())
	got := map[string]Change{}
	for _, c := range rep.Changes {
		if c.Scope == "overall" {
			got[c.Metric] = c
		}
	}
	for _, m := range []string{"gap.p50", "gap.p95", "tpot.mean"} {
		t.Logf("%s: %.2f → %.2f ms, p = %.3g (%s, n = %d/%d)", m, got[m].Base, got[m].New, got[m].P, got[m].Test, got[m].NBase, got[m].NNew)
	}
	for _, m := range []string{"gap.p50", "tpot.mean"} {
		if got[m].Status != StatusRegressed {
			t.Errorf("%s: got %q, want %q", m, got[m].Status, StatusRegressed)
		}
	}
	for _, m := range []string{"ttft.p50", "ttft.p95"} {
		if got[m].Status == StatusRegressed {
			t.Errorf("%s flagged although TTFT did not change", m)
		}
	}
	// The test's sample is one value per request: its own gap p50 or p95.
	for _, tc := range []struct {
		metric, test string
		pct          float64
	}{
		{"gap.p50", "mann-whitney, per-request gap p50", 50},
		{"gap.p95", "mann-whitney, per-request gap p95", 95},
	} {
		c := got[tc.metric]
		_, want := MannWhitney(perRequestGapPct(base, tc.pct), perRequestGapPct(cur, tc.pct))
		if c.Test != tc.test || c.NBase != 30 || c.NNew != 30 || c.P != want {
			t.Errorf("%s: test %q on %d/%d values, p = %v; want %q on 30/30, p = %v",
				tc.metric, c.Test, c.NBase, c.NNew, c.P, tc.test, want)
		}
	}
	// The figure stays the scope's, pooled over every gap.
	if g := measure.Group(cur, measure.Overall); got["gap.p95"].New != g.GapMs.P95 {
		t.Errorf("gap.p95 new = %v, want the summary's pooled %v", got["gap.p95"].New, g.GapMs.P95)
	}
}
