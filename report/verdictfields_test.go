package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestReportsReadVerdictFields: the reports read what a verdict judged
// from its fields, never from its text, which is for display only.
func TestReportsReadVerdictFields(t *testing.T) {
	r := &runfile.Run{Verdicts: []runfile.Verdict{
		{Rule: "longest stall under 80 ms", Metric: "gap", Statistic: "max", Operator: "<=", Limit: 80, Unit: "ms"},
		// A count is not a time: no limit line in ms.
		{Rule: "gap.count <= 3", Metric: "gap", Statistic: "count", Operator: "<=", Limit: 3},
		{Rule: "gap.max (loose) <= 500ms", Metric: "gap", Statistic: "p95", Operator: "<=", Limit: 50, Unit: "ms"},
	}}
	if got := gapLimit(r); got != 80 {
		t.Errorf("gap limit %v, want 80 (the one gap.max verdict, by its fields)", got)
	}
}

// TestMethodologyScopesEachThreshold: each recorded threshold is named
// with the scope it is judged on, a suite's explicit scope included.
func TestMethodologyScopesEachThreshold(t *testing.T) {
	r := reporttest.StallRun()
	r.Config.Thresholds = []string{"ttft.p95 < 250ms", "[category:long] gap.p95 <= 90ms"}
	r.Config.SuiteThresholds = map[string][]string{"complex": {"gap.max <= 120ms", "[cold] ttft.max < 2s"}}
	var b bytes.Buffer
	if err := Methodology(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- `ttft.p95 < 250ms` (whole run)",
		"- `gap.p95 <= 90ms` (category long)",
		"- `gap.max <= 120ms` (category complex, from the suite)",
		"- `ttft.max < 2s` (cold request, from the suite)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("methodology lacks %q", want)
		}
	}
}

// TestWaterfallPicksTheSummarysPercentile: of 12 warm requests, the row
// "p95" is the request nearest the p95 the summary states (interpolated
// between the 11th and 12th, nearer the 11th), not the nearest-rank
// one, which is the max (and the p99 row was then left out as the same
// request).
func TestWaterfallPicksTheSummarysPercentile(t *testing.T) {
	r := &runfile.Run{}
	for i := range 13 {
		ttft := int64(i+1) * 1e6
		r.Requests = append(r.Requests, runfile.Request{Index: i, PromptID: "p", Status: 200, TTFTNS: ttft, E2ENS: ttft + 1e6, OutputTokens: 2, TokenTimesNS: []int64{ttft, ttft + 1e6}})
	}
	r.Requests[0].Cold = true
	var labels []string
	for _, row := range waterfallRows(r, Options{MaxWaterfall: 4}) {
		labels = append(labels, row.Label)
	}
	want := "#0 p (cold)|p50 #7 p|p95 #11 p|p99 #12 p"
	if got := strings.Join(labels, "|"); got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}
