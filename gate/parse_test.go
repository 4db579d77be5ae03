package gate

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		name   string
		expr   string
		scope  measure.Scope
		metric string
		stat   string
		op     Op
		limit  float64
		unit   string
		text   string
	}{
		{"ttft p95 ms", "ttft.p95 < 250ms", measure.Scope{}, "ttft", "p95", Less, 250, "ms", "ttft.p95 < 250ms"},
		{"gap max le", "gap.max <= 120ms", measure.Scope{}, "gap", "max", LessEq, 120, "ms", "gap.max <= 120ms"},
		{"tpot std", "tpot.std < 60ms", measure.Scope{}, "tpot", "std", Less, 60, "ms", "tpot.std < 60ms"},
		{"error rate percent", "errors.rate < 1%", measure.Scope{}, "errors", "rate", Less, 1, "%", "errors.rate < 1%"},
		{"seconds", "e2e.p99 < 8s", measure.Scope{}, "e2e", "p99", Less, 8000, "ms", "e2e.p99 < 8s"},
		{"microseconds", "gap.p50 < 500us", measure.Scope{}, "gap", "p50", Less, 0.5, "ms", "gap.p50 < 500us"},
		{"micro sign", "gap.p50 < 500µs", measure.Scope{}, "gap", "p50", Less, 0.5, "ms", "gap.p50 < 500µs"},
		{"nanoseconds", "gap.p50 < 2000000ns", measure.Scope{}, "gap", "p50", Less, 2, "ms", "gap.p50 < 2000000ns"},
		{"visible ttft", "visible_ttft.p95 < 300ms", measure.Scope{}, "visible_ttft", "p95", Less, 300, "ms", "visible_ttft.p95 < 300ms"},
		{"tokens per event", "tokens_per_event.mean <= 1", measure.Scope{}, "tokens_per_event", "mean", LessEq, 1, "", "tokens_per_event.mean <= 1"},
		{"category scope", "[category:complex] gap.max <= 120ms", measure.Category("complex"), "gap", "max", LessEq, 120, "ms", "gap.max <= 120ms"},
		{"cold scope", "[cold] ttft.p50 < 2s", measure.Cold, "ttft", "p50", Less, 2000, "ms", "ttft.p50 < 2s"},
		{"overall scope", "[overall] errors.count <= 0", measure.Overall, "errors", "count", LessEq, 0, "", "errors.count <= 0"},
		{"no spaces", "ttft.p95<250ms", measure.Scope{}, "ttft", "p95", Less, 250, "ms", "ttft.p95 < 250ms"},
		{"lots of spaces", "  ttft.p95   >=   0.5 s ", measure.Scope{}, "ttft", "p95", GreaterEq, 500, "ms", "ttft.p95 >= 0.5s"},
		{"unicode op", "gap.p95 ≤ 70ms", measure.Scope{}, "gap", "p95", LessEq, 70, "ms", "gap.p95 <= 70ms"},
		{"alias median", "ttft.median < 100ms", measure.Scope{}, "ttft", "p50", Less, 100, "ms", "ttft.p50 < 100ms"},
		{"upper case", "TTFT.P95 < 250ms", measure.Scope{}, "ttft", "p95", Less, 250, "ms", "ttft.p95 < 250ms"},
		{"exponent", "gap.max < 1e3ms", measure.Scope{}, "gap", "max", Less, 1000, "ms", "gap.max < 1e3ms"},
		{"time count has no unit", "ttft.count >= 10", measure.Scope{}, "ttft", "count", GreaterEq, 10, "", "ttft.count >= 10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(tc.expr)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.expr, err)
			}
			if r.Scope != tc.scope || r.Metric != tc.metric || r.Stat != tc.stat || r.Op != tc.op || r.Unit != tc.unit {
				t.Errorf("Parse(%q) = %+v, want scope %v metric %s stat %s op %v unit %q", tc.expr, r, tc.scope, tc.metric, tc.stat, tc.op, tc.unit)
			}
			if math.Abs(r.Limit-tc.limit) > 1e-9 {
				t.Errorf("limit: got %v, want %v", r.Limit, tc.limit)
			}
			if got := r.Text(); got != tc.text {
				t.Errorf("Text: got %q, want %q", got, tc.text)
			}
			// The canonical form reads back to the same rule.
			back, err := Parse(r.String())
			if err != nil || back != r {
				t.Errorf("Parse(String()) = %+v, %v; want %+v", back, err, r)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		expr string
		want string // a part of the message
	}{
		{"empty", "   ", "empty expression"},
		{"unknown metric", "latency.p95 < 250ms", `unknown metric "latency"`},
		{"no stat", "ttft < 250ms", `expected ".STAT" after "ttft"`},
		{"unknown stat", "ttft.p42 < 250ms", `ttft has no stat "p42"`},
		{"stat not for metric", "errors.p95 < 1%", `errors has no stat "p95"`},
		{"no operator", "ttft.p95 250ms", "expected an operator"},
		{"equality", "ttft.p95 == 250ms", "not supported"},
		{"no value", "ttft.p95 <", "expected a value"},
		{"not a number", "ttft.p95 < fast", `expected a number at "fast"`},
		{"bad number", "ttft.p95 < 1.2.3ms", `bad number "1.2.3"`},
		{"negative", "ttft.p95 < -5ms", "cannot be negative"},
		{"time without unit", "ttft.p95 < 250", "ttft.p95 is a time; give a unit"},
		{"time in percent", "gap.max < 5%", "is a time, not a percentage"},
		{"unknown time unit", "gap.max < 5min", `unknown unit "min"`},
		{"rate without percent", "errors.rate < 0.01", "errors.rate is a rate; give it in percent"},
		{"rate in ms", "errors.rate < 1ms", `its unit is %, not "ms"`},
		{"rate over 100", "errors.rate < 150%", "more than 100%"},
		{"count with unit", "errors.count < 3ms", "takes no unit"},
		{"ratio with unit", "tokens_per_event.mean <= 1ms", "takes no unit"},
		{"unclosed scope", "[cold ttft.p95 < 1s", `no closing "]"`},
		{"unknown scope", "[warm] ttft.p95 < 1s", `unknown scope "warm"`},
		{"empty category", "[category:] ttft.p95 < 1s", "needs a category name"},
		{"no metric", "[cold] < 1s", "expected a metric"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.expr)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want an error containing %q", tc.expr, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) error = %q, want it to contain %q", tc.expr, err, tc.want)
			}
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("errors.Is(%v, ErrSyntax) = false, want true", err)
			}
			var se *SyntaxError
			if !errors.As(err, &se) || se.Expr != tc.expr {
				t.Errorf("error does not carry the expression %q: %#v", tc.expr, err)
			}
			if Validate(tc.expr) == nil {
				t.Errorf("Validate(%q) = nil, want an error", tc.expr)
			}
		})
	}
}

func TestParseAllJoinsErrors(t *testing.T) {
	rules, err := ParseAll([]string{"ttft.p95 < 250ms", "nope.p95 < 1ms", "gap.max < 5"})
	if len(rules) != 1 {
		t.Errorf("got %d rules, want 1", len(rules))
	}
	if err == nil || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "gap.max is a time") {
		t.Errorf("got error %v, want both bad expressions named", err)
	}
}

func TestOpHolds(t *testing.T) {
	tests := []struct {
		op          Op
		v, limit    float64
		want        bool
		description string
	}{
		{Less, 1, 2, true, "1 < 2"},
		{Less, 2, 2, false, "2 < 2"},
		{LessEq, 2, 2, true, "2 <= 2"},
		{Greater, 2, 2, false, "2 > 2"},
		{GreaterEq, 2, 2, true, "2 >= 2"},
		{Greater, 3, 2, true, "3 > 2"},
	}
	for _, tc := range tests {
		t.Run(tc.description, func(t *testing.T) {
			if got := tc.op.Holds(tc.v, tc.limit); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"ttft.p95 < 250ms", "[category:complex] gap.max <= 120ms", "errors.rate < 1%", "[cold] e2e.p99 >= 8s", "tokens_per_event.mean <= 1", "gap.p50 < 1e3µs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		r, err := Parse(expr)
		if err != nil {
			return
		}
		back, err := Parse(r.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok but its String %q does not parse: %v", expr, r.String(), err)
		}
		if back.Metric != r.Metric || back.Stat != r.Stat || back.Op != r.Op || back.Scope != r.Scope || back.Unit != r.Unit {
			t.Fatalf("round trip of %q: got %+v, want %+v", expr, back, r)
		}
	})
}
