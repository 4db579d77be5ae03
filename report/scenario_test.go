package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// rapidFireRun is a rapid-fire run: the alone request, the interrupted one
// (aborted on purpose) and the follow-up, for two pairs; the second abort
// was not real (2 tokens after it, 1 foreign event).
func rapidFireRun() *runfile.Run {
	req := func(id string, aborted bool, ttft int64) runfile.Request {
		return runfile.Request{PromptID: id, Category: "short", Aborted: aborted, TTFTNS: ttft, E2ENS: ttft + 1e6,
			OutputTokens: 2, ContentEvents: 2, TokenTimesNS: []int64{ttft, ttft + 1e6}}
	}
	r := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Config: runfile.Config{Suite: "s", Scenario: "rapid-fire"}}
	r.Requests = []runfile.Request{
		req("b1", false, 20e6), req("a1", true, 10e6), req("b1", false, 30e6),
		req("b2", false, 20e6), req("a2", true, 10e6), req("b2", false, 50e6),
	}
	for i := range r.Requests {
		r.Requests[i].Index = i
	}
	r.Scenario = &runfile.Scenario{Name: "rapid-fire", FollowUps: []runfile.FollowUp{
		{Interrupted: 1, FollowUp: 2, AbortLatencyNS: 1_500_000, TTFTNS: 30e6, AloneTTFTNS: 20e6},
		{Interrupted: 4, FollowUp: 5, AbortLatencyNS: 4_000_000, TokensAfterAbort: 2, ForeignEvents: 1, TTFTNS: 50e6, AloneTTFTNS: 20e6},
	}}
	measure.Summarize(r)
	return r
}

func TestScenarioInTextAndHTML(t *testing.T) {
	r := rapidFireRun()
	var txt bytes.Buffer
	if err := Text(&txt, r, Options{}); err != nil {
		t.Fatal(err)
	}
	out := txt.String()
	for _, want := range []string{
		"rapid-fire: 2 follow-ups; 2 tokens produced after the aborts, 1 foreign events",
		"2 aborted on purpose",
		"+50%", // 30 ms against 20 ms alone
		"+150%",
		"4.0", // the second abort latency
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "the aborts were real") {
		t.Error("text report calls aborts real although tokens came after one")
	}
	var html bytes.Buffer
	if err := HTML(&html, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `id="scenario"`) || !strings.Contains(html.String(), "<td>a2</td>") {
		t.Error("HTML report lacks the interrupted-answers table")
	}
}

func TestScenarioAbsentForPlainRuns(t *testing.T) {
	r := rapidFireRun()
	r.Scenario = nil
	var txt bytes.Buffer
	if err := Text(&txt, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(txt.String(), "follow-ups") {
		t.Error("a run without a scenario shows a scenario section")
	}
}

func TestScenarioRealAborts(t *testing.T) {
	r := rapidFireRun()
	r.Scenario.FollowUps[1].TokensAfterAbort, r.Scenario.FollowUps[1].ForeignEvents = 0, 0
	if got := scenarioSummary(r); !strings.HasSuffix(got, "the aborts were real") {
		t.Errorf("summary = %q, want it to end with the aborts being real", got)
	}
	r.Scenario.FollowUps[0].TokensAfterAbort = -1
	if got := scenarioSummary(r); !strings.Contains(got, "unanswered") {
		t.Errorf("summary = %q, want unanswered aborts named", got)
	}
}
