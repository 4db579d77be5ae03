package report_test

import (
	"bytes"
	"fmt"
	"html"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// deadRun is a run against a target that refused every connection: 20
// measured requests, each failed with the same message, and an error-rate
// threshold crossed by all of them.
func deadRun() *runfile.Run {
	const refused = `connect: Post "http://127.0.0.1:1/v1/chat/completions": dial tcp 127.0.0.1:1: connect: connection refused`
	r := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Target: runfile.Target{URL: "http://127.0.0.1:1", API: "chat"}}
	v := runfile.Verdict{Rule: "errors.rate <= 1%", Scope: "overall", Metric: "errors", Statistic: "rate", Unit: "%", Limit: 1, Value: 100}
	for i := range 20 {
		id := fmt.Sprintf("req-%02d", i)
		r.Requests = append(r.Requests, runfile.Request{Index: i, RequestID: id, PromptID: "p", Category: "short", Error: refused, ErrorKind: runfile.ErrorConnect})
		v.Offenders = append(v.Offenders, runfile.Offender{Index: i, RequestID: id, PromptID: "p", Category: "short", Value: 1})
	}
	r.Verdicts = []runfile.Verdict{v}
	measure.Summarize(r)
	return r
}

// TestErrorsGroupedByMessage: every report says what the failures were,
// once, with a count, instead of only "error: connect" per offender; the
// HTML report says it inside its verdict banner.
func TestErrorsGroupedByMessage(t *testing.T) {
	r := deadRun()
	want := "connection refused ×20"
	var txt, page, junit, md bytes.Buffer
	if err := report.Text(&txt, r, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := report.HTML(&page, r, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := report.JUnit(&junit, r); err != nil {
		t.Fatal(err)
	}
	if err := report.Methodology(&md, r); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*bytes.Buffer{"text": &txt, "junit": &junit, "methodology": &md} {
		if n := strings.Count(b.String(), want); n == 0 {
			t.Errorf("%s report does not group the errors (%q):\n%s", name, want, b.String())
		}
	}
	if !strings.Contains(txt.String(), "errors by message") {
		t.Errorf("text report has no errors section:\n%s", txt.String())
	}
	p := html.UnescapeString(page.String())
	start := strings.Index(p, `<section id="verdict"`)
	end := strings.Index(p[max(start, 0):], "</section>")
	if start < 0 || end < 0 {
		t.Fatal("no verdict banner in the HTML report")
	}
	if banner := p[start : start+end]; !strings.Contains(banner, want) {
		t.Errorf("the HTML banner does not name the cause:\n%s", banner)
	}
}
