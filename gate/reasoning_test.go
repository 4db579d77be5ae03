package gate

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// A reasoning run: thinking at 10 ms intervals from 100 ms, answers from
// 1.5 s (two requests) and 2.5 s (one).
func reasoningRun() *runfile.Run {
	run := &runfile.Run{SchemaVersion: runfile.SchemaVersion}
	for i, answer := range []float64{1500, 1500, 2500} {
		q := req(i, "think", "t", 100, 10, 10, 10, answer-130, 20)
		q.ReasoningEvents, q.ReasoningRuns = 4, [][2]int{{0, 4}}
		run.Requests = append(run.Requests, q)
	}
	measure.Summarize(run)
	return run
}

func TestReasoningThresholds(t *testing.T) {
	run := reasoningRun()
	for _, c := range []struct {
		expr   string
		passed bool
		value  float64
	}{
		{"answer_ttft.p95 < 2s", false, 2400},
		{"answer_ttft.p50 < 2s", true, 1500},
		{"reasoning_ttft.max <= 100ms", true, 100},
		{"reasoning_tpot.p95 <= 30ms", true, 10},
		{"answer_tpot.mean <= 15ms", false, 20},
		{"reasoning_span.max < 31ms", true, 30},
		{"[category:think] answer_span.p50 <= 20ms", true, 20},
	} {
		vs := Judge(run, []Rule{MustParse(c.expr)})
		if len(vs) != 1 || !vs[0].Judged() {
			t.Fatalf("%s: %+v, want one judged verdict", c.expr, vs)
		}
		if vs[0].Passed != c.passed || vs[0].Value != c.value {
			t.Errorf("%s: passed %v value %v, want %v %v", c.expr, vs[0].Passed, vs[0].Value, c.passed, c.value)
		}
	}
	// The summary alone (a run file without requests) judges the same.
	run.Requests = nil
	if vs := Judge(run, []Rule{MustParse("answer_ttft.p95 < 2s")}); !vs[0].Judged() || vs[0].Value != 2400 {
		t.Errorf("from the summary: %+v", vs[0])
	}
	// answer_ttft.p95 names each request's own answer TTFT as an objective.
	obj := Objectives([]Rule{MustParse("answer_ttft.p95 < 2s")})
	if len(obj) != 1 || obj[0].Metric != measure.AnswerTTFT {
		t.Errorf("objectives %+v, want one on answer_ttft", obj)
	}
}

// Without thinking, the answer is the whole stream: answer_ttft is ttft,
// from the requests and from a summary alike; the reasoning figures are
// not judged.
func TestAnswerWithoutThinking(t *testing.T) {
	run := testRun()
	run.Config.SuiteThresholds = nil
	for _, withRequests := range []bool{true, false} {
		if !withRequests {
			run.Requests = nil
		}
		a := Judge(run, []Rule{MustParse("answer_ttft.p95 < 1s"), MustParse("ttft.p95 < 1s"), MustParse("reasoning_ttft.p95 < 1s")})
		if !a[0].Judged() || a[0].Value != a[1].Value {
			t.Errorf("requests %v: answer_ttft %+v, ttft %+v; want the same", withRequests, a[0], a[1])
		}
		if a[2].Judged() {
			t.Errorf("requests %v: reasoning_ttft judged %v on a run that never thought", withRequests, a[2].Value)
		}
	}
}
