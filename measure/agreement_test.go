package measure_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/compare"
	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// richRun is a run with every kind of request a scope rule must sort:
// cold, warm-up, aborted on purpose (with extreme times that would show
// if they leaked into a figure), failed, and successful requests counted
// per event, by usage total and not at all, over three categories, one of
// which failed entirely.
func richRun(seed uint64) *runfile.Run {
	r := rand.New(rand.NewPCG(seed, 7))
	run := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Config: runfile.Config{FrameHz: 60, RenderBatchMS: 16}}
	add := func(q runfile.Request) {
		q.Index = len(run.Requests)
		q.RequestID = fmt.Sprintf("req-%03d", q.Index)
		q.PromptID = fmt.Sprintf("%s-%02d", q.Category, q.Index)
		run.Requests = append(run.Requests, q)
	}
	stream := func(cat string, ttftMS, itlMS float64, events, perEvent int, source runfile.TokenSource) runfile.Request {
		q := runfile.Request{Category: cat, Status: 200, FinishReason: "stop"}
		t := ttftMS
		for i := range events {
			if i > 0 {
				t += itlMS * float64(perEvent) * (0.7 + 0.6*r.Float64())
				if r.IntN(15) == 0 {
					t += 150 * r.Float64() // a stall
				}
			}
			q.TokenTimesNS = append(q.TokenTimesNS, int64(t*1e6))
		}
		q.TTFTNS = q.TokenTimesNS[0]
		q.E2ENS = q.TokenTimesNS[events-1] + 2e6
		q.ContentEvents = events
		q.OutputTokens = events * perEvent
		q.TokenSource = source
		if source == runfile.TokensEvents && perEvent > 1 {
			q.TokenCounts = slices.Repeat([]int{perEvent}, events)
		}
		return q
	}
	cold := stream("short", 900, 25, 12, 1, "usage")
	cold.Cold = true
	add(cold)
	w := stream("short", 400, 30, 10, 1, "usage")
	w.Warmup = true
	add(w)
	for i := range 36 {
		cat := []string{"short", "long", "complex"}[i%3]
		per, source := 1, runfile.TokensUsage
		switch i % 4 {
		case 1:
			per, source = 4, runfile.TokensEvents // per-event counts
		case 2:
			per, source = 3, runfile.TokensUsage // batched, total only
		case 3:
			source = "" // no count at all
		}
		q := stream(cat, 120+80*r.Float64(), 15+10*r.Float64(), 8+r.IntN(30), per, source)
		if i%2 == 0 { // the server's own account, as llama-server sends
			q.Server = &runfile.ServerTimings{QueueNS: int64(r.IntN(5e6)), PrefillNS: q.TTFTNS - int64(2e6+r.IntN(3e6)),
				DecodeNS: q.TokenTimesNS[len(q.TokenTimesNS)-1] - q.TTFTNS, DecodeTokens: q.OutputTokens, Source: "llama.cpp"}
		}
		if i%6 == 0 { // a reasoning model: its first three events think
			q.ReasoningEvents, q.ReasoningRuns = 3, [][2]int{{0, 3}}
		}
		add(q)
		if i%7 == 0 {
			add(runfile.Request{Category: cat, Status: 500, Error: "http 500: boom", ErrorKind: "http"})
		}
		if i%5 == 0 {
			a := stream(cat, 9000, 3000, 5, 1, "usage")
			a.Aborted = true
			add(a)
		}
	}
	for range 3 {
		add(runfile.Request{Category: "doomed", Status: 503, Error: "http 503: overloaded", ErrorKind: "http"})
	}
	measure.Summarize(run)
	return run
}

// summaryField is DESIGN's mapping of metric.stat onto the summary: the
// figure every other package must agree with.
func summaryField(g runfile.Group, metric, stat string) (float64, bool) {
	var d stats.Distribution
	switch metric {
	case "ttft":
		d = g.TTFTMs
	case "e2e":
		d = g.E2EMs
	case "visible_ttft":
		d = g.VisibleTTFTMs
	case "gap":
		d = g.GapMs
	case "visible_gap":
		d = g.VisibleGapMs
	case "tpot_std":
		d = g.TPOTStdMs
	case "ttft_network":
		d = g.TTFTNetworkMs
	case "server_tpot":
		d = g.ServerTPOTMs
	case "painted_ttft":
		d = g.PaintedTTFTMs
	case "paint_gap":
		d = g.PaintGapMs
	case "render_overhead":
		d = g.RenderOverheadMs
	case "long_frame":
		d = g.LongFrameMs
	case "reasoning_ttft":
		d = g.ReasoningTTFTMs
	case "reasoning_span":
		d = g.ReasoningSpanMs
	case "answer_span":
		d = g.AnswerSpanMs
	case "answer_ttft":
		if !measure.Reasoned(g) {
			return summaryField(g, "ttft", stat)
		}
		d = g.AnswerTTFTMs
	case "reasoning_tpot", "answer_tpot":
		if metric == "answer_tpot" && !measure.Reasoned(g) {
			return summaryField(g, "tpot", stat)
		}
		per, iv := g.ReasoningTPOTMs, g.ReasoningTokenIntervalMs
		if metric == "answer_tpot" {
			per, iv = g.AnswerTPOTMs, g.AnswerTokenIntervalMs
		}
		switch stat {
		case "mean", "min", "max", "count":
			d = per
		default:
			d = iv
		}
	case "tpot":
		switch stat {
		case "mean", "min", "max", "count":
			d = g.TPOTMs
		default:
			d = g.TokenIntervalMs
		}
	case "errors":
		if stat == "count" {
			return float64(g.Errors), g.Requests > 0
		}
		return 100 * g.ErrorRate(), g.Requests > 0
	case "tokens_per_event":
		return g.TokensPerEvent, g.TokensPerEvent > 0
	default:
		panic("unknown metric " + metric)
	}
	if stat == "count" {
		return float64(d.Count), g.Requests > 0
	}
	if d.Count == 0 {
		return 0, false
	}
	v, _ := d.Field(stat)
	return v, true
}

func groupOf(run *runfile.Run, scope string) runfile.Group {
	switch {
	case scope == "overall":
		return run.Summary.Overall
	case scope == "cold":
		return *run.Summary.Cold
	}
	return run.Summary.Categories[strings.TrimPrefix(scope, "category:")]
}

var distStats = []string{"count", "mean", "std", "min", "p50", "p90", "p95", "p99", "max"}

// TestEveryMetricAgrees walks every metric and scope through the summary,
// the gate and compare, and checks that each reports the same figure.
func TestEveryMetricAgrees(t *testing.T) {
	run := richRun(1)
	scopes := []string{"overall", "cold", "category:short", "category:long", "category:complex", "category:doomed"}
	if got := measure.Measured(run); len(got) != len(scopes) {
		t.Fatalf("measured scopes %v, want %v", got, scopes)
	}
	var rules []gate.Rule
	type key struct{ scope, metric, stat string }
	var keys []key
	for _, m := range gate.Metrics() {
		sts := distStats
		switch m {
		case "errors":
			sts = []string{"rate", "count"}
		case "tokens_per_event":
			sts = []string{"mean"}
		case "goodput":
			continue // TestGoodputAgrees
		}
		for _, sc := range scopes {
			for _, st := range sts {
				unit, limit := "ms", "1e12"
				switch {
				case m == "errors" && st == "rate":
					unit, limit = "%", "100"
				case st == "count" || m == "tokens_per_event":
					unit = ""
				}
				rules = append(rules, gate.MustParse(fmt.Sprintf("[%s] %s.%s <= %s%s", sc, m, st, limit, unit)))
				keys = append(keys, key{sc, m, st})
			}
		}
	}
	verdicts := gate.Judge(run, rules)
	if len(verdicts) != len(keys) {
		t.Fatalf("%d verdicts for %d rules", len(verdicts), len(keys))
	}
	gateValue := map[key]runfile.Verdict{}
	judged := 0
	for i, k := range keys {
		v := verdicts[i]
		gateValue[k] = v
		want, ok := summaryField(groupOf(run, k.scope), k.metric, k.stat)
		switch {
		case !ok && v.Judged():
			t.Errorf("[%s] %s.%s: the summary has no value but the gate judged %v", k.scope, k.metric, k.stat, v.Value)
		case ok && !v.Judged():
			t.Errorf("[%s] %s.%s: the summary says %v but the gate found no data (%s)", k.scope, k.metric, k.stat, want, v.NoData)
		case ok && math.Abs(v.Value-want) > 1e-9*math.Max(1, math.Abs(want)):
			t.Errorf("[%s] %s.%s: gate %v, summary %v", k.scope, k.metric, k.stat, v.Value, want)
		case ok:
			judged++
		}
	}
	if judged < len(keys)/2 {
		t.Errorf("only %d of %d figures had data: the run does not exercise the scopes", judged, len(keys))
	}
	// The scope whose requests all failed has no figure but its errors.
	if v := gateValue[key{"category:doomed", "ttft", "p95"}]; v.Judged() {
		t.Errorf("a scope with no success was judged at %v", v.Value)
	}
	if v := gateValue[key{"category:doomed", "errors", "rate"}]; !v.Judged() || v.Value != 100 {
		t.Errorf("the failed scope's error rate: %+v, want judged at 100%%", v)
	}

	// compare's figures are the same figures, on both sides.
	other := richRun(2)
	rep := compare.Runs(run, other, compare.DefaultOptions())
	if len(rep.Changes) == 0 {
		t.Fatal("compare found nothing to compare")
	}
	for _, c := range rep.Changes {
		metric, stat, _ := strings.Cut(c.Metric, ".")
		for side, r := range map[string]*runfile.Run{"base": run, "new": other} {
			got := c.Base
			if side == "new" {
				got = c.New
			}
			want, ok := summaryField(groupOf(r, c.Scope), metric, stat)
			if ok && math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("compare %s %s %s = %v, summary %v", side, c.Scope, c.Metric, got, want)
			}
		}
	}

	// The report's table shows the same figures, scope by scope.
	run.Verdicts = verdicts
	var text bytes.Buffer
	if err := report.Text(&text, run, report.Options{}); err != nil {
		t.Fatal(err)
	}
	columns := []struct{ metric, stat string }{
		{"ttft", "p50"}, {"ttft", "p95"}, {"ttft", "p99"}, {"visible_ttft", "p95"}, {"tpot", "mean"},
		{"gap", "p50"}, {"gap", "p95"}, {"gap", "p99"}, {"gap", "max"}, {"gap", "std"},
	}
	rows := 0
	for _, line := range strings.Split(text.String(), "\n") {
		f := strings.Fields(line)
		if len(f) != 1+2+len(columns)+1 || (f[0] != "overall" && run.Summary.Categories[f[0]].Requests == 0) {
			continue
		}
		scope := "category:" + f[0]
		if f[0] == "overall" {
			scope = "overall"
		}
		rows++
		for i, c := range columns {
			want := "-"
			if v, ok := summaryField(groupOf(run, scope), c.metric, c.stat); ok {
				want = fmt.Sprintf("%.1f", v)
			}
			if got := f[3+i]; got != want {
				t.Errorf("report %s %s.%s = %s, summary %s", scope, c.metric, c.stat, got, want)
			}
		}
	}
	if rows != 5 {
		t.Errorf("found %d scope rows in the report, want 5 (4 categories and overall):\n%s", rows, text.String())
	}

	// Nothing aborted or warm-up leaks into a figure: the aborted answers
	// took 9 s to start and 3 s between tokens.
	if o := run.Summary.Overall; o.TTFTMs.Max > 1000 || o.GapMs.Max > 1000 {
		t.Errorf("an aborted or warm-up request leaked into overall: ttft max %v, gap max %v", o.TTFTMs.Max, o.GapMs.Max)
	}
}

// TestGoodputAgrees checks that a goodput threshold judges the figure the
// run file's summary records, both from measure.Goodput under the run's
// own thresholds read as objectives.
func TestGoodputAgrees(t *testing.T) {
	run := richRun(1)
	run.Config.SuiteThresholds = map[string][]string{"short": {"ttft.p95 < 30ms"}, "long": {"gap.max <= 25ms"}}
	sum := gate.Goodput(run, nil)
	if len(sum.Objectives) != 2 || sum.Requests == 0 {
		t.Fatalf("goodput %+v: want 2 objectives over the warm requests", sum)
	}
	if sum.Good == 0 || sum.Good == sum.Requests {
		t.Fatalf("goodput %d of %d: the run does not exercise the objectives", sum.Good, sum.Requests)
	}
	vs := gate.Judge(run, []gate.Rule{gate.MustParse("goodput.share >= 0%"), gate.MustParse("goodput.rate >= 0")})
	share, rate := vs[len(vs)-2], vs[len(vs)-1]
	if !share.Judged() || math.Abs(share.Value-100*sum.Share) > 1e-9 {
		t.Errorf("gate goodput.share %+v, summary %v%%", share, 100*sum.Share)
	}
	if !rate.Judged() || math.Abs(rate.Value-sum.PerS) > 1e-9 {
		t.Errorf("gate goodput.rate %+v, summary %v/s", rate, sum.PerS)
	}
}
