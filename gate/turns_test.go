package gate

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestJudgeTurnScope(t *testing.T) {
	r := &runfile.Run{SchemaVersion: runfile.SchemaVersion}
	for i, ttft := range []float64{100, 300, 120, 500} { // two conversations of two turns
		q := req(i, "chat", "c", ttft, 20)
		q.ConversationID, q.Turn = []string{"a", "b"}[i/2], i%2+1
		r.Requests = append(r.Requests, q)
	}
	measure.Summarize(r)
	var rules []Rule
	for _, expr := range []string{"[turn:1] ttft.max < 200ms", "[turn:2] ttft.max < 200ms", "[turn:3] ttft.max < 200ms"} {
		rule, err := Parse(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		rules = append(rules, rule)
	}
	vs := Judge(r, rules)
	if len(vs) != 3 {
		t.Fatalf("%d verdicts, want 3", len(vs))
	}
	if v := vs[0]; !v.Passed || v.Scope != "turn:1" || v.Value != 120 {
		t.Errorf("turn 1: %+v, want passed at 120 ms", v)
	}
	if v := vs[1]; !v.Failed() || v.Value != 500 || len(v.Offenders) != 2 || v.Offenders[0].Index != 3 {
		t.Errorf("turn 2: %+v, want failed at 500 ms, offenders #3 then #1", v)
	}
	if v := vs[2]; v.Judged() {
		t.Errorf("turn 3 (no such turn): %+v, want not judged", v)
	}
	// A run file with a summary only is judged on its summary's turns.
	sum := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Summary: r.Summary}
	if v := Judge(sum, rules[1:2])[0]; !v.Failed() || v.Value != 500 {
		t.Errorf("turn 2 on the summary: %+v, want failed at 500 ms", v)
	}
	for _, bad := range []string{"[turn:0] ttft.p95 < 1s", "[turn:x] ttft.p95 < 1s"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
