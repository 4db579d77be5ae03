package gate

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
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
