package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestSparseRuns renders runs that lack most data: every reporter must
// cope and say what is missing rather than fail or panic.
func TestSparseRuns(t *testing.T) {
	allFailed := reporttest.StallRun()
	for i := range allFailed.Requests {
		q := &allFailed.Requests[i]
		q.Error, q.ErrorKind, q.TokenTimesNS, q.Status = "connection refused", "connect", nil, 0
	}
	allFailed.Verdicts, allFailed.Experience, allFailed.ColdStart = nil, nil, nil
	measure.Summarize(allFailed)

	oneToken := reporttest.StallRun()
	for i := range oneToken.Requests {
		q := &oneToken.Requests[i]
		q.TokenTimesNS = q.TokenTimesNS[:1]
		q.OutputTokens, q.ContentEvents = 1, 1
	}
	oneToken.Verdicts = nil
	measure.Summarize(oneToken)

	sameRead := reporttest.StallRun() // tokens read together: zero gaps
	for i := range sameRead.Requests {
		q := &sameRead.Requests[i]
		for k := range q.TokenTimesNS {
			q.TokenTimesNS[k] = q.TokenTimesNS[0]
		}
	}
	measure.Summarize(sameRead)

	tests := []struct {
		name     string
		run      *runfile.Run
		wantHTML string
	}{
		{"empty", &runfile.Run{SchemaVersion: 1}, "No thresholds were set for this run"},
		{"every request failed", allFailed, "no request produced a token"},
		{"one token each", oneToken, "no gaps: no warm request produced two tokens"},
		{"zero gaps", sameRead, "Gaps between tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var text, page, junit, md bytes.Buffer
			if err := Text(&text, tt.run, Options{}); err != nil {
				t.Fatal(err)
			}
			if err := HTML(&page, tt.run, Options{}); err != nil {
				t.Fatal(err)
			}
			if err := JUnit(&junit, tt.run); err != nil {
				t.Fatal(err)
			}
			if err := Methodology(&md, tt.run); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(page.String(), tt.wantHTML) {
				t.Errorf("HTML lacks %q", tt.wantHTML)
			}
			if !strings.Contains(text.String(), "overall") {
				t.Errorf("text has no overall row:\n%s", text.String())
			}
			var doc struct{ XMLName xml.Name }
			if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
				t.Errorf("JUnit is not XML: %v", err)
			}
			for _, c := range Charts(tt.run, Options{}) {
				parseSVG(t, c.SVG)
			}
		})
	}
}

func TestManyRequestsWaterfallPicks(t *testing.T) {
	run := reporttest.StallRun()
	base := run.Requests[2]
	for i := 0; i < 200; i++ {
		q := base
		q.Index = len(run.Requests)
		q.RequestID = "bulk"
		q.TTFTNS = int64(50+i) * 1e6
		q.TokenTimesNS = []int64{q.TTFTNS, q.TTFTNS + 20e6}
		run.Requests = append(run.Requests, q)
	}
	rows := waterfallRows(run, Options{})
	var labels []string
	for _, r := range rows {
		labels = append(labels, r.Label)
	}
	got := strings.Join(labels, "|")
	for _, want := range []string{"(cold)", "p50 ", "p95 ", "p99 ", "max "} {
		if !strings.Contains(got, want) {
			t.Errorf("waterfall rows %q lack %q", labels, want)
		}
	}
	if len(rows) > 5 {
		t.Errorf("waterfall shows %d rows for 212 requests, want the cold one and four picks", len(rows))
	}
}
