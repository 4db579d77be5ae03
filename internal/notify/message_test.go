package notify

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func passingRun() *runfile.Run {
	r := reporttest.StallRun()
	for i := range r.Verdicts {
		r.Verdicts[i].Passed = true
		r.Verdicts[i].Offenders = nil
	}
	return r
}

func TestShouldAlert(t *testing.T) {
	tests := []struct {
		name        string
		run         *runfile.Run
		regressions []string
		want        bool
	}{
		{"thresholds crossed", reporttest.StallRun(), nil, true},
		{"all held, no regression", passingRun(), nil, false},
		{"all held, a regression", passingRun(), []string{"ttft.p95 overall: 80 → 120 ms"}, true},
		{"no verdicts at all", &runfile.Run{}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ShouldAlert(tt.run, tt.regressions); got != tt.want {
				t.Errorf("ShouldAlert = %v, want %v", got, tt.want)
			}
		})
	}
}

const reportURL = "https://perf-runs.s3.amazonaws.com/nightly/2026-11-29/report.html"

func TestBuildFields(t *testing.T) {
	run := reporttest.StallRun()
	regs := []string{"gap.p95 category:complex: 21.0 → 31.5 ms (+50%)"}
	msg := Build(run, reportURL, regs)
	a := msg.Alert
	if a.Device != "bench-01 (Example CPU @ 2.00GHz, 2 cores)" {
		t.Errorf("device = %q", a.Device)
	}
	if a.OS != "linux 6.1.0-28-amd64 amd64" || a.Model != "stories260K (F32)" || a.Tier != "mainstream" {
		t.Errorf("os, model, tier = %q, %q, %q", a.OS, a.Model, a.Tier)
	}
	if a.Target != "http://127.0.0.1:8080/v1/chat/completions (embedded)" {
		t.Errorf("target = %q", a.Target)
	}
	if len(a.Crossed) != 2 {
		t.Fatalf("crossed = %+v, want gap.max and errors.rate", a.Crossed)
	}
	gap := a.Crossed[0]
	if gap.Rule != "gap.max <= 120ms" || gap.Scope != "category:complex" || gap.Limit != 120 || gap.Value <= 120 ||
		len(gap.Prompts) != 1 || gap.Prompts[0] != reporttest.StallPromptID {
		t.Errorf("gap verdict = %+v, want value > limit 120 and prompt %s", gap, reporttest.StallPromptID)
	}
	var stalled *Offender
	for i, o := range a.Offenders {
		if o.RequestID == reporttest.StallRequestID {
			stalled = &a.Offenders[i]
		}
	}
	if stalled == nil || stalled.PromptID != reporttest.StallPromptID || stalled.Value < reporttest.StallMS-5 {
		t.Errorf("offenders = %+v, want %s with a gap of about %d ms", a.Offenders, reporttest.StallRequestID, reporttest.StallMS)
	}
	if a.ReportURL != reportURL || len(a.Regressions) != 1 {
		t.Errorf("report %q regressions %v", a.ReportURL, a.Regressions)
	}
	if !strings.HasPrefix(a.Summary, "tokenpulse: 2 thresholds crossed, 1 regression: stories260K (F32) on bench-01") {
		t.Errorf("summary = %q", a.Summary)
	}
	// Slack's mrkdwn needs <, > and & escaped, except in links.
	if !strings.Contains(msg.Text, "gap.max &lt;= 120ms") || strings.Contains(msg.Text, "<= 120") {
		t.Errorf("text does not escape the rule for Slack: %q", msg.Text)
	}
	if !strings.Contains(msg.Text, "<"+reportURL+"|report.html>") {
		t.Errorf("text has no link to the report: %q", msg.Text)
	}
	body := a.PlainText()
	for _, want := range []string{"complex-02 (request req-0007, category complex)", "gap.max <= 120ms [category:complex]", "limit 120 ms", reportURL, regs[0]} {
		if !strings.Contains(body, want) {
			t.Errorf("plain text lacks %q:\n%s", want, body)
		}
	}
}

func TestBuildGolden(t *testing.T) {
	msg := Build(reporttest.StallRun(), reportURL, []string{"gap.p95 category:complex: 21.0 → 31.5 ms (+50%)"})
	got, err := msg.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "stall.json", got)
	golden(t, "stall.txt", []byte(msg.Alert.PlainText()))
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\ngot:\n%s", name, got)
	}
}

func TestBuildSlackLimits(t *testing.T) {
	run := reporttest.StallRun()
	v := &run.Verdicts[0]
	for i := range 40 {
		v.Offenders = append(v.Offenders, runfile.Offender{RequestID: "r" + strings.Repeat("x", i), PromptID: "p" + strings.Repeat("y", 200), Value: 1})
	}
	msg := Build(run, "", nil)
	// 40 added, the stalled request, and the cut stream of errors.rate.
	if len(msg.Alert.Offenders) != 42 {
		t.Errorf("alert keeps %d offenders, want all 42", len(msg.Alert.Offenders))
	}
	for _, b := range msg.Blocks {
		if b.Text != nil && len([]rune(b.Text.Text)) > 3000 {
			t.Errorf("%s block text has %d characters, Slack allows 3000", b.Type, len([]rune(b.Text.Text)))
		}
		if len(b.Fields) > 10 {
			t.Errorf("section has %d fields, Slack allows 10", len(b.Fields))
		}
	}
	if h := msg.Blocks[0]; h.Type != "header" || len([]rune(h.Text.Text)) > 150 {
		t.Errorf("first block %+v, want a header of at most 150 characters", h)
	}
	if !strings.Contains(string(mustJSON(t, msg)), "… and 32 more") {
		t.Error("offender list is not cut with a count of the rest")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNum(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		unit string
		want string
	}{
		{312.46, "ms", "312.5 ms"},
		{120, "ms", "120 ms"},
		{6.6667, "%", "6.7%"},
		{3, "", "3"},
	} {
		if got := Num(tt.v, tt.unit); got != tt.want {
			t.Errorf("Num(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}

func TestErrorOffenders(t *testing.T) {
	run := reporttest.StallRun()
	run.Verdicts = []runfile.Verdict{{
		Rule: "[category:complex] errors.rate < 1%", Metric: "errors", Statistic: "rate", Operator: "<", Scope: "category:complex", Value: 20, Limit: 1, Unit: "%",
		Offenders: []runfile.Offender{
			{RequestID: "r1", PromptID: "p1", Category: "complex", Value: 503},
			{RequestID: "r2", PromptID: "p2", Category: "complex", Value: 0},
		},
	}}
	a := Build(run, "", nil).Alert
	want := []string{
		"p1 (request r1, category complex): failed, HTTP status 503 on [category:complex] errors.rate < 1%",
		"p2 (request r2, category complex): failed on [category:complex] errors.rate < 1%",
	}
	if len(a.Offenders) != len(want) {
		t.Fatalf("offenders %+v, want %d", a.Offenders, len(want))
	}
	for i, o := range a.Offenders {
		if got := o.Line(); got != want[i] {
			t.Errorf("offender %d: %q, want %q", i, got, want[i])
		}
	}
}

// TestCrossedLineKeepsASmallLimit: a limit of 1 µs reads 0.001 ms, as the
// rule and the reports give it, not "0 ms".
func TestCrossedLineKeepsASmallLimit(t *testing.T) {
	c := Crossed{Rule: "gap.p50 < 1us", Scope: "overall", Value: 0.4, Limit: 0.001, Unit: "ms"}
	if got, want := c.Line(), "gap.p50 < 1us [overall]: 0.4 ms, limit 0.001 ms"; got != want {
		t.Errorf("Line() = %q, want %q", got, want)
	}
}
