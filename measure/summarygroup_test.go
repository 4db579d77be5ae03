package measure

import (
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestSummaryGroup: one accessor from a scope to its summary group.
func TestSummaryGroup(t *testing.T) {
	cold := runfile.Group{Requests: 1}
	sum := &runfile.Summary{
		Overall:    runfile.Group{Requests: 9},
		Cold:       &cold,
		Categories: map[string]runfile.Group{"long": {Requests: 4}, "short": {Requests: 5}},
		Turns:      []runfile.TurnGroup{{Turn: 2, Group: runfile.Group{Requests: 3}}},
	}
	for _, tc := range []struct {
		s    Scope
		want int
		ok   bool
	}{
		{Overall, 9, true}, {Cold, 1, true}, {Category("long"), 4, true}, {Turn(2), 3, true},
		{Category("nope"), 0, false}, {Turn(3), 0, false}, {Warmup, 0, false}, {Failed, 0, false},
	} {
		g, ok := SummaryGroup(sum, tc.s)
		if g.Requests != tc.want || ok != tc.ok {
			t.Errorf("%s: %d requests, ok %v; want %d, %v", tc.s, g.Requests, ok, tc.want, tc.ok)
		}
	}
	if _, ok := SummaryGroup(&runfile.Summary{}, Cold); ok {
		t.Error("a summary without a cold group gave one")
	}
	var names []string
	for _, g := range Groups(sum) {
		names = append(names, g.Scope.String())
	}
	if got := strings.Join(names, " "); got != "category:long category:short overall" {
		t.Errorf("Groups: %s", got)
	}
}

func TestParseJudged(t *testing.T) {
	for name, want := range map[string]Scope{"overall": Overall, "cold": Cold, "category: long ": Category("long"), "turn:2": Turn(2)} {
		if s, err := ParseJudged(name); err != nil || s != want {
			t.Errorf("ParseJudged(%q) = %v, %v; want %v", name, s, err, want)
		}
	}
	for name, msg := range map[string]string{
		"warmup": `unknown scope "warmup"`, "failed": `unknown scope "failed"`, "warm": `unknown scope "warm"`,
		"category:": "needs a category name", "turn:0": "needs a turn number",
	} {
		if _, err := ParseJudged(name); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseJudged(%q): %v, want an error with %q", name, err, msg)
		}
	}
}

// TestDrift: a stored summary that its requests do not give is named,
// scope by scope.
func TestDrift(t *testing.T) {
	run := &runfile.Run{Requests: []runfile.Request{
		{Index: 0, Category: "short", Status: 200, TTFTNS: 10e6, E2ENS: 30e6, TokenTimesNS: []int64{10e6, 20e6, 30e6}, OutputTokens: 3},
		{Index: 1, Category: "long", Status: 200, TTFTNS: 20e6, E2ENS: 50e6, TokenTimesNS: []int64{20e6, 35e6, 50e6}, OutputTokens: 3},
	}}
	Summarize(run)
	if d := Drift(run); d != "" {
		t.Fatalf("a fresh summary drifts: %s", d)
	}
	g := run.Summary.Categories["long"]
	g.TTFTMs.P95 = 99
	run.Summary.Categories["long"] = g
	if d := Drift(run); !strings.Contains(d, "category:long ttft.p95 99 stored, 20 from the requests") {
		t.Errorf("drift %q", d)
	}
}
