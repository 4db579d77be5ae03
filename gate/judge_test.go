package gate

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// req builds a successful request whose first token arrives at ttftMS and
// whose later tokens follow after gapsMS.
func req(index int, cat, prompt string, ttftMS float64, gapsMS ...float64) runfile.Request {
	t := int64(ttftMS * 1e6)
	times := []int64{t}
	for _, g := range gapsMS {
		t += int64(g * 1e6)
		times = append(times, t)
	}
	return runfile.Request{
		Index: index, RequestID: fmt.Sprintf("req-%d", index), Category: cat, PromptID: prompt,
		Status: 200, TTFTNS: times[0], E2ENS: t + 1e6,
		OutputTokens: len(times), ContentEvents: len(times), TokenTimesNS: times,
	}
}

// testRun is the hand-built run the judge tests share:
//
//	short   (warm) idx 0-3: TTFT 100, 120, 140, 300 ms; gaps 20, 20, 20
//	complex (warm) idx 4-6: TTFT 200, 210, 220; gaps [20 20 20], [20 150 20], [20 20 250]
//	cold           idx 7:   TTFT 900; gaps 20, 20
//	warm-up        idx 8:   TTFT 5000 (in no scope)
//	failed         idx 9:   short, HTTP 500
func testRun() *runfile.Run {
	cold := req(7, "short", "s-cold", 900, 20, 20)
	cold.Cold = true
	wu := req(8, "short", "s-warm", 5000, 20)
	wu.Warmup = true
	failed := runfile.Request{Index: 9, RequestID: "req-9", Category: "short", PromptID: "s-fail", Status: 500, Error: "http 500", ErrorKind: "http"}
	run := &runfile.Run{
		SchemaVersion: runfile.SchemaVersion,
		Requests: []runfile.Request{
			req(0, "short", "s-a", 100, 20, 20, 20),
			req(1, "short", "s-b", 120, 20, 20, 20),
			req(2, "short", "s-c", 140, 20, 20, 20),
			req(3, "short", "s-d", 300, 20, 20, 20),
			req(4, "complex", "c-a", 200, 20, 20, 20),
			req(5, "complex", "c-b", 210, 20, 150, 20),
			req(6, "complex", "c-c", 220, 20, 20, 250),
			cold, wu, failed,
		},
		Config: runfile.Config{SuiteThresholds: map[string][]string{
			"complex": {"gap.max <= 120ms"},
			"short":   {"ttft.p95 < 250ms"},
		}},
	}
	measure.Summarize(run)
	return run
}

func TestJudge(t *testing.T) {
	run := testRun()
	// Pooled warm gaps: nineteen of 20 ms, one of 150, one of 250.
	// mean = 780/21; sample std = sqrt(Σ(x−mean)²/20) ≈ 56.40 ms.
	mean := 780.0 / 21
	ss := 19*math.Pow(20-mean, 2) + math.Pow(150-mean, 2) + math.Pow(250-mean, 2)
	gapStd := math.Sqrt(ss / 20)

	type off struct {
		index int
		value float64
	}
	tests := []struct {
		name      string
		expr      string // "" for the suite's own rule
		scope     string
		rule      string
		source    string
		value     float64
		passed    bool
		offenders []off
		noData    bool
	}{
		{
			// Suite: complex's worst stall is request 6's 250 ms, then 5's 150.
			name: "suite gap max on complex", scope: "category:complex", rule: "gap.max <= 120ms", source: "suite",
			value: 250, passed: false, offenders: []off{{6, 250}, {5, 150}},
		},
		{
			// Suite: short's TTFTs 100,120,140,300: rank 3·0.95 = 2.85,
			// 140 + 0.85·160 = 276 ms. Only request 3 is above 250.
			name: "suite ttft p95 on short", scope: "category:short", rule: "ttft.p95 < 250ms", source: "suite",
			value: 276, passed: false, offenders: []off{{3, 300}},
		},
		{
			name: "overall ttft max passes without cold and warm-up", expr: "ttft.max < 1s", scope: "overall", rule: "ttft.max < 1s",
			value: 300, passed: true,
		},
		{
			name: "cold scope", expr: "[cold] ttft.max < 500ms", scope: "cold", rule: "ttft.max < 500ms",
			value: 900, passed: false, offenders: []off{{7, 900}},
		},
		{
			// Warm: 8 requests, 1 failed.
			name: "error rate", expr: "errors.rate < 1%", scope: "overall", rule: "errors.rate < 1%",
			value: 12.5, passed: false, offenders: []off{{9, 500}},
		},
		{
			name: "tpot std is the std of the gaps", expr: "tpot.std < 60ms", scope: "overall", rule: "tpot.std < 60ms",
			value: gapStd, passed: true,
		},
		{
			// Own gap std: request 6 [20 20 250] ≈ 132.8, request 5 [20 150 20] ≈ 75.1.
			name: "tpot std offenders by own gap std", expr: "tpot.std < 50ms", scope: "overall", rule: "tpot.std < 50ms",
			value: gapStd, passed: false, offenders: []off{{6, math.Sqrt((2*math.Pow(230.0/3, 2) + math.Pow(460.0/3, 2)) / 2)}, {5, math.Sqrt((2*math.Pow(130.0/3, 2) + math.Pow(260.0/3, 2)) / 2)}},
		},
		{
			name: "tokens per event", expr: "tokens_per_event.mean <= 1", scope: "overall", rule: "tokens_per_event.mean <= 1",
			value: 1, passed: true,
		},
		{
			name: "lower bound", expr: "gap.p50 > 10ms", scope: "overall", rule: "gap.p50 > 10ms",
			value: 20, passed: true,
		},
		{
			name: "missing category is not judged", expr: "[category:nope] ttft.p95 < 1s", scope: "category:nope", rule: "ttft.p95 < 1s",
			value: 0, passed: false, noData: true,
		},
		{
			// 7 warm TTFTs, mean 1290/7 ≈ 184.3; 300, 100 and 120 are more
			// than 50 ms away from it.
			name: "ttft std offenders are far from the mean", expr: "ttft.std < 50ms", scope: "overall", rule: "ttft.std < 50ms",
			value: stdOf(100, 120, 140, 300, 200, 210, 220), passed: false, offenders: []off{{3, 300 - 1290.0/7}, {0, 1290.0/7 - 100}, {1, 1290.0/7 - 120}},
		},
	}
	var rules []Rule
	for _, tc := range tests {
		if tc.expr != "" {
			r := MustParse(tc.expr)
			r.Source = SourceFlag
			rules = append(rules, r)
		}
	}
	// A duplicate of a suite rule is judged once.
	rules = append(rules, MustParse("[category:complex] gap.max <= 120ms"))
	verdicts := Judge(run, rules)
	if got, want := len(verdicts), len(tests); got != want {
		for _, v := range verdicts {
			t.Logf("verdict %s %s", v.Scope, v.Rule)
		}
		t.Fatalf("got %d verdicts, want %d", got, want)
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := verdicts[i]
			if v.Scope != tc.scope || v.Rule != tc.rule {
				t.Fatalf("verdict %d is %s %q, want %s %q", i, v.Scope, v.Rule, tc.scope, tc.rule)
			}
			if tc.source != "" && v.Source != tc.source {
				t.Errorf("source: got %q, want %q", v.Source, tc.source)
			}
			if math.Abs(v.Value-tc.value) > 1e-6 {
				t.Errorf("value: got %v, want %v", v.Value, tc.value)
			}
			if v.Passed != tc.passed {
				t.Errorf("passed: got %v, want %v", v.Passed, tc.passed)
			}
			if v.Judged() == tc.noData {
				t.Errorf("judged = %v (no data %q), want %v", v.Judged(), v.NoData, !tc.noData)
			}
			if len(v.Offenders) != len(tc.offenders) {
				t.Fatalf("offenders: got %+v, want %+v", v.Offenders, tc.offenders)
			}
			for j, o := range tc.offenders {
				got := v.Offenders[j]
				if got.Index != o.index || math.Abs(got.Value-o.value) > 1e-6 {
					t.Errorf("offender %d: got index %d value %v, want %d %v", j, got.Index, got.Value, o.index, o.value)
				}
				q := run.Requests[o.index]
				if got.RequestID != q.RequestID || got.PromptID != q.PromptID || got.Category != q.Category {
					t.Errorf("offender %d names %q/%q/%q, want %q/%q/%q", j, got.RequestID, got.PromptID, got.Category, q.RequestID, q.PromptID, q.Category)
				}
			}
		})
	}
	if Passed(verdicts) {
		t.Error("Passed = true with failing verdicts")
	}
	if got := len(Failed(verdicts)); got != 6 {
		t.Errorf("Failed: got %d, want 6", got)
	}
	if got := len(NotJudged(verdicts)); got != 1 {
		t.Errorf("NotJudged: got %d, want 1", got)
	}
}

func stdOf(xs ...float64) float64 {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

func TestJudgeCapsOffendersWorstFirst(t *testing.T) {
	run := &runfile.Run{SchemaVersion: 1}
	for i := range 30 {
		run.Requests = append(run.Requests, req(i, "c", fmt.Sprintf("p%d", i), 100+float64(i)))
	}
	v := Judge(run, []Rule{MustParse("ttft.max < 50ms")})
	if len(v) != 1 || v[0].Passed {
		t.Fatalf("got %+v, want one failed verdict", v)
	}
	o := v[0].Offenders
	if len(o) != MaxOffenders {
		t.Fatalf("got %d offenders, want %d", len(o), MaxOffenders)
	}
	if o[0].Index != 29 || o[len(o)-1].Index != 29-MaxOffenders+1 {
		t.Errorf("offenders run from %d to %d, want 29 down to %d", o[0].Index, o[len(o)-1].Index, 29-MaxOffenders+1)
	}
}

func TestJudgeOnSummaryOnly(t *testing.T) {
	full := testRun()
	run := &runfile.Run{SchemaVersion: 1, Summary: full.Summary}
	v := Judge(run, []Rule{MustParse("[category:complex] gap.max < 300ms")})
	if len(v) != 1 || !v[0].Passed || v[0].Value != 250 {
		t.Errorf("got %+v, want the summary's 250 ms passing", v)
	}
}

func TestRecordedRules(t *testing.T) {
	run := testRun()
	run.Config.Thresholds = []string{"gap.p95 < 100ms", "[cold] ttft.p50 < 2s"}
	run.Config.SuiteThresholds["short"] = append(run.Config.SuiteThresholds["short"], "[overall] e2e.max < 1s")
	rules, err := RecordedRules(run)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules {
		got = append(got, r.Source+" "+r.String())
	}
	want := []string{
		"suite [category:complex] gap.max <= 120ms",
		"suite [category:short] ttft.p95 < 250ms",
		"suite [overall] e2e.max < 1s",
		"flag gap.p95 < 100ms",
		"flag [cold] ttft.p50 < 2s",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	run.Config.Thresholds = append(run.Config.Thresholds, "bogus")
	if _, err := RecordedRules(run); err == nil {
		t.Error("RecordedRules accepted a bogus expression")
	}
}

func TestJudgeLeavesOutAbortedRequests(t *testing.T) {
	run := testRun()
	before := Judge(run, []Rule{MustParse("gap.max <= 1000ms")})
	// An answer the client aborted on purpose (rapid-fire) with a stall far
	// above every limit must change no verdict and name no offender.
	run.Requests = append(run.Requests, runfile.Request{
		Index: len(run.Requests), PromptID: "aborted", Category: "complex", Aborted: true,
		TTFTNS: 5e9, E2ENS: 9e9, OutputTokens: 2, ContentEvents: 2, TokenTimesNS: []int64{5e9, 9e9},
	})
	after := Judge(run, []Rule{MustParse("gap.max <= 1000ms")})
	if len(before) != len(after) {
		t.Fatalf("got %d verdicts, want %d", len(after), len(before))
	}
	for i := range before {
		if before[i].Value != after[i].Value || before[i].Passed != after[i].Passed {
			t.Errorf("%s on %s: %v/%v, want %v/%v", after[i].Rule, after[i].Scope, after[i].Value, after[i].Passed, before[i].Value, before[i].Passed)
		}
		for _, o := range after[i].Offenders {
			if o.PromptID == "aborted" {
				t.Errorf("%s names the aborted request as an offender", after[i].Rule)
			}
		}
	}
}

func TestNoDataIsNotJudged(t *testing.T) {
	run := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Requests: []runfile.Request{
		{Index: 0, Category: "a", Error: "boom", ErrorKind: "http", Status: 500},
		{Index: 1, Category: "a", Error: "boom", ErrorKind: "http", Status: 500},
	}}
	vs := Judge(run, []Rule{MustParse("ttft.p95 < 250ms"), MustParse("gap.max <= 120ms"), MustParse("errors.rate <= 1%")})
	for _, v := range vs[:2] {
		if v.Judged() || v.Failed() || v.Value != 0 || !strings.Contains(v.NoData, "all 2 requests of overall failed") {
			t.Errorf("%s: judged %v failed %v value %v no data %q; want not judged, with the reason", v.Rule, v.Judged(), v.Failed(), v.Value, v.NoData)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"passed":null`) || !strings.Contains(string(b), `"no_data":"no data: all 2`) {
			t.Errorf("%s: run.json form %s, want passed null and the reason", v.Rule, b)
		}
	}
	// The error budget still judges a scope whose requests all failed.
	if e := vs[2]; !e.Judged() || !e.Failed() || e.Value != 100 {
		t.Errorf("errors.rate: judged %v failed %v value %v, want judged, failed at 100%%", e.Judged(), e.Failed(), e.Value)
	}
	if Passed(vs[:2]) != true {
		t.Error("verdicts without data made the gate fail")
	}
	b, _ := json.Marshal(runfile.Verdict{Rule: "x", Passed: true})
	if !strings.Contains(string(b), `"passed":true`) {
		t.Errorf("a judged verdict is written %s", b)
	}
}
