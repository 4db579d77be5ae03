package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// thinkingRun is the stall run with the first three events of every
// successful request marked as thinking.
func thinkingRun() *runfile.Run {
	r := reporttest.StallRun()
	for i := range r.Requests {
		q := &r.Requests[i]
		if q.OK() && len(q.TokenTimesNS) > 4 {
			q.ReasoningEvents, q.ReasoningRuns = 3, [][2]int{{0, 3}}
		}
	}
	measure.Summarize(r)
	return r
}

func TestReasoningReports(t *testing.T) {
	r := thinkingRun()
	g := r.Summary.Overall
	answer := ms(g.AnswerTTFTMs, g.AnswerTTFTMs.P95)
	think := ms(g.ReasoningTTFTMs, g.ReasoningTTFTMs.P95)
	if answer == think || answer == "-" {
		t.Fatalf("answer ttft p95 %s, reasoning %s: the fixture does not split", answer, think)
	}
	var text, html, junit bytes.Buffer
	if err := Text(&text, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := JUnit(&junit, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "html": html.String(), "junit": junit.String()} {
		for _, want := range []string{answer, think} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %s", name, want)
			}
		}
	}
	for _, want := range []string{"answer ttft p95", "think ttft p95", "start at the first answer token"} {
		if !strings.Contains(text.String(), want) || !strings.Contains(html.String(), want) {
			t.Errorf("text or HTML report lacks %q", want)
		}
	}
	if !strings.Contains(junit.String(), `name="answer_ttft.p95_ms" value="`+answer+`"`) {
		t.Errorf("JUnit lacks answer_ttft.p95_ms = %s", answer)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := runfile.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Summary.Overall.AnswerTTFTMs != g.AnswerTTFTMs || len(back.Requests[1].ReasoningRuns) == 0 {
		t.Errorf("run.json: answer ttft %+v, reasoning runs %v", back.Summary.Overall.AnswerTTFTMs, back.Requests[1].ReasoningRuns)
	}
}

// A run that never thought shows no reasoning section.
func TestNoReasoningSection(t *testing.T) {
	var text bytes.Buffer
	if err := Text(&text, reporttest.StallRun(), Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "answer ttft") {
		t.Errorf("a run without thinking shows the reasoning table")
	}
}
