package gate

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestObjectivesReadUpperBoundsPerRequest(t *testing.T) {
	rules := []Rule{
		MustParse("[category:short] ttft.p95 < 250ms"),
		MustParse("[category:long] gap.p95 <= 90ms"),
		MustParse("gap.max <= 0.12s"),
		MustParse("tpot.p99 <= 40ms"),
		// None of these is a per-request objective.
		MustParse("ttft.count >= 10"),
		MustParse("ttft.std <= 50ms"),
		MustParse("e2e.p50 >= 1ms"),
		MustParse("errors.rate <= 1%"),
		MustParse("tokens_per_event.max <= 4"),
		MustParse("[cold] ttft.max <= 5s"),
		MustParse("goodput.share >= 90%"),
		// A duplicate is read once.
		MustParse("[overall] gap.max <= 0.12s"),
	}
	got := Objectives(rules)
	want := []measure.Objective{
		{Scope: measure.Category("short"), Metric: measure.TTFT, Stat: "p95", Limit: 250, Strict: true, Text: "[category:short] ttft.p95 < 250ms"},
		{Scope: measure.Category("long"), Metric: measure.Gap, Stat: "p95", Limit: 90, Text: "[category:long] gap.p95 <= 90ms"},
		{Scope: measure.Overall, Metric: measure.Gap, Stat: "max", Limit: 120, Text: "gap.max <= 0.12s"},
		{Scope: measure.Overall, Metric: measure.TokenInterval, Stat: "p99", Limit: 40, Text: "tpot.p99 <= 40ms"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d objectives %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("objective %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestGoodputThresholdParses(t *testing.T) {
	for _, ok := range []string{"goodput.share >= 95%", "goodput.rate >= 2", "[category:short] goodput.share > 50%"} {
		if err := Validate(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"goodput.share >= 95", "goodput.rate >= 2%", "goodput.p95 >= 1", "goodput.share >= 120%"} {
		if Validate(bad) == nil {
			t.Errorf("%q validated", bad)
		}
	}
}

// TestGoodputRuleOnASummaryOnlyRun: a run file without requests judges a
// goodput rule on the summary's goodput, which is the overall one: a
// turn's or a category's goodput is not in it, so such a rule has no
// data (a turn was judged on the overall goodput before the scopes were
// one model).
func TestGoodputRuleOnASummaryOnlyRun(t *testing.T) {
	run := &runfile.Run{Summary: runfile.Summary{
		Overall: runfile.Group{Requests: 10},
		Turns:   []runfile.TurnGroup{{Turn: 2, Group: runfile.Group{Requests: 4}}},
		Goodput: &runfile.Goodput{Requests: 10, Good: 9, Share: 0.9},
	}}
	vs := Judge(run, []Rule{MustParse("goodput.share >= 80%"), MustParse("[turn:2] goodput.share >= 80%"), MustParse("[category:x] goodput.share >= 80%")})
	if len(vs) != 3 {
		t.Fatalf("%d verdicts", len(vs))
	}
	if !vs[0].Judged() || !vs[0].Passed || vs[0].Value != 90 {
		t.Errorf("overall: %+v, want 90%% passed", vs[0])
	}
	for _, v := range vs[1:] {
		if v.Judged() {
			t.Errorf("%s %s judged on the overall goodput: %+v", v.Scope, v.Rule, v)
		}
	}
}
