package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// noDataRun is StallRun with one more rule, on a category the run did not
// measure: not judged, its value 0 meaning nothing.
func noDataRun() *runfile.Run {
	r := reporttest.StallRun()
	r.Verdicts = append(r.Verdicts, runfile.Verdict{Rule: "ttft.p95 < 300ms", Scope: "category:long", Source: "suite",
		Limit: 300, Unit: "ms", NoData: "no data: the run has no category:long request"})
	return r
}

const noDataLine = "not judged: no data (the run has no category:long request)"

func render(t *testing.T, r *runfile.Run) (text, html, junit, md string) {
	t.Helper()
	var a, b, c, d bytes.Buffer
	if err := Text(&a, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := JUnit(&c, r); err != nil {
		t.Fatal(err)
	}
	if err := Methodology(&d, r); err != nil {
		t.Fatal(err)
	}
	return a.String(), b.String(), c.String(), d.String()
}

func TestNotJudgedIsShownAsNoDataNeverAsAValue(t *testing.T) {
	text, html, junit, md := render(t, noDataRun())
	for name, out := range map[string]string{"text": text, "html": html, "junit": junit, "methodology": md} {
		if !strings.Contains(out, noDataLine) {
			t.Errorf("%s lacks %q", name, noDataLine)
		}
		for _, bad := range []string{"0.0 ms vs limit 300 ms", "ttft.p95 &lt; 300ms crossed", "ttft.p95 < 300ms crossed", "0.0 ms, limit 300 ms"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s shows the rule without data as a value: %q", name, bad)
			}
		}
	}
	if !strings.Contains(text, "verdicts: 2 of 5 thresholds crossed, 1 not judged (no data)") {
		t.Errorf("text headline does not count the rule not judged apart:\n%s", text)
	}
	if !strings.Contains(html, "FAIL: 2 of 5 thresholds crossed, 1 not judged (no data)") || !strings.Contains(html, "– not judged") {
		t.Errorf("html banner or verdict row does not show the rule not judged")
	}
	if n := strings.Count(html, `<li><code style=`); n != 2 {
		t.Errorf("html banner lists %d crossed thresholds, want the 2 judged ones", n)
	}
	if !strings.Contains(md, "1 verdict was not judged") {
		t.Errorf("methodology does not say a verdict was not judged:\n%s", md)
	}

	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Skipped int `xml:"skipped,attr"`
			Cases   []struct {
				Name    string `xml:"name,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(junit), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Failures != 2 || doc.Suites[0].Skipped != 1 {
		t.Errorf("junit: %d failures, %d skipped; want 2 and 1", doc.Failures, doc.Suites[0].Skipped)
	}
	for _, c := range doc.Suites[0].Cases {
		if c.Name == "ttft.p95 < 300ms" && (c.Skipped == nil || c.Failure != nil || !strings.Contains(c.Skipped.Message, noDataLine)) {
			t.Errorf("junit case of the rule without data: skipped %+v, failure %v; want skipped with %q", c.Skipped, c.Failure != nil, noDataLine)
		}
	}
}

func TestHTMLBannerWhenNothingWasJudged(t *testing.T) {
	r := reporttest.StallRun()
	r.Verdicts = []runfile.Verdict{{Rule: "ttft.p95 < 1s", Scope: "overall", Limit: 1000, Unit: "ms", NoData: "no data: all 11 requests of overall failed"}}
	_, html, _, _ := render(t, r)
	if strings.Contains(html, "PASS:") || !strings.Contains(html, "NOT JUDGED: the threshold was not judged (no data)") {
		t.Errorf("a run with no rule judged shows a pass banner")
	}
}

func comparedRun(skipped string) *runfile.Run {
	r := reporttest.StallRun()
	c := &runfile.Comparison{Against: "last", Skipped: skipped}
	if skipped == "" {
		c = &runfile.Comparison{
			Against: "last", Base: "history run 2 (2026-11-28T10:00:00Z)", BaseID: 2,
			BaseStartedAt: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC),
			Tolerance:     0.1, FloorMS: 2, Alpha: 0.01, Regressions: 1,
			Changes: []runfile.Change{
				{Scope: "category:complex", Metric: "gap.max", Unit: "ms", Base: 25, New: 299.9, Delta: 274.9, Relative: 10.996, P: 0.00001, Test: "mann-whitney, per-request max gap", NBase: 6, NNew: 6, Status: "regressed"},
				{Scope: "overall", Metric: "ttft.p95", Unit: "ms", Base: 97, New: 98.6, Delta: 1.6, Relative: 0.016, P: 0.5, Test: "mann-whitney, per-request ttft", NBase: 11, NNew: 11, Status: "within tolerance"},
				{Scope: "cold", Metric: "ttft.p95", Unit: "ms", Base: 390, New: 400.6, Delta: 10.6, Relative: 0.027, P: 1, Test: "mann-whitney, per-request ttft", NBase: 1, NNew: 1, Status: "too few samples"},
			},
			Notes: []string{"category \"long\" is only in the base run"},
		}
	}
	r.Comparison = c
	return r
}

func TestComparisonIsInEveryReport(t *testing.T) {
	text, html, junit, md := render(t, comparedRun(""))
	reg := "category:complex gap.max: 25.0 ms → 299.9 ms"
	for name, out := range map[string]string{"text": text, "html": html, "junit": junit, "methodology": md} {
		if !strings.Contains(out, "history run 2") || !strings.Contains(out, "1 regression") {
			t.Errorf("%s does not name the base and the regression count", name)
		}
		if name != "html" && !strings.Contains(out, reg) {
			t.Errorf("%s lacks the regression %q", name, reg)
		}
	}
	if !strings.Contains(html, `id="comparison"`) || !strings.Contains(html, `<tr class="regressed"><td>category:complex</td><td>gap.max</td>`) {
		t.Errorf("html lacks the comparison section with the regression marked")
	}
	if !strings.Contains(md, "## Comparison with an earlier run") || !strings.Contains(md, "Mann-Whitney U") {
		t.Errorf("methodology lacks the comparison section:\n%s", md)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Skipped  int    `xml:"skipped,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Type string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(junit), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 2 {
		t.Fatalf("junit has %d suites, want the verdicts and the comparison", len(doc.Suites))
	}
	cs := doc.Suites[1]
	if cs.Name != "tokenpulse.comparison" || cs.Tests != 3 || cs.Failures != 1 || cs.Skipped != 1 || doc.Failures != 2+1 || doc.Tests != 4+3 {
		t.Errorf("comparison suite %q: %d tests, %d failures, %d skipped (root %d/%d); want 3, 1, 1 (root 7/3)", cs.Name, cs.Tests, cs.Failures, cs.Skipped, doc.Tests, doc.Failures)
	}
	if c := cs.Cases[0]; c.Classname != "comparison.category:complex" || c.Name != "gap.max" || c.Failure == nil || c.Failure.Type != "regression" {
		t.Errorf("regression case: %+v", c)
	}

	why := "the last run of this target used suite zh-medical, this one en-assistant; pass --against-any to compare anyway"
	text, html, junit, md = render(t, comparedRun(why))
	for name, out := range map[string]string{"text": text, "html": html, "junit": junit, "methodology": md} {
		if !strings.Contains(out, why) {
			t.Errorf("%s does not say why nothing was compared", name)
		}
	}
	if !strings.Contains(junit, `<skipped message="not compared: `+why+`">`) {
		t.Errorf("junit lacks the skipped comparison:\n%s", junit)
	}
}

func TestPerEventAndPerTokenLabels(t *testing.T) {
	r := reporttest.StallRun() // no token counts: one token per event assumed
	text, html, _, md := render(t, r)
	note := "no token counts: TPOT and per-token figures are per event (complex, short, overall, cold)"
	if strings.Count(text, note) != 1 || strings.Count(html, note) != 1 {
		t.Errorf("text has the per-event note %d times, html %d; want once each", strings.Count(text, note), strings.Count(html, note))
	}
	if !strings.Contains(text, "TPOT is per output token; gaps are per event") || !strings.Contains(html, "TPOT is per output token. Gaps are per event") {
		t.Errorf("the table does not say what TPOT and gaps are per")
	}
	if !strings.Contains(md, "Gap figures are always per event") || !strings.Contains(md, "TPOT and every per-token figure are per event") {
		t.Errorf("methodology does not define TPOT per token and gaps per event:\n%s", md)
	}

	// With the server's per-event counts there is no such note.
	for i := range r.Requests {
		q := &r.Requests[i]
		q.TokenSource = "server"
		q.TokenCounts = make([]int, len(q.TokenTimesNS))
		for k := range q.TokenCounts {
			q.TokenCounts[k] = 1
		}
	}
	measure.Summarize(r)
	text, html, _, _ = render(t, r)
	if strings.Contains(text, "no token counts") || strings.Contains(html, "no token counts") {
		t.Errorf("a run with token counts is said to have none")
	}
}

// TestVerdictHeadlineGrammar: one threshold is not "all 1 thresholds".
func TestVerdictHeadlineGrammar(t *testing.T) {
	one := &runfile.Run{Verdicts: []runfile.Verdict{{Rule: "ttft.p95 < 1s", Passed: true}}}
	if got := verdictHeadline(one); got != "the threshold held" {
		t.Errorf("one threshold held: %q", got)
	}
	one.Verdicts[0].Passed = false
	if got := verdictHeadline(one); got != "1 of 1 threshold crossed" {
		t.Errorf("one threshold crossed: %q", got)
	}
}
