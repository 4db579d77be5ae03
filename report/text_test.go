package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

func TestTextGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, reporttest.StallRun(), Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "text/stall.txt", buf.Bytes())
}

func TestTextContents(t *testing.T) {
	run := reporttest.StallRun()
	var buf bytes.Buffer
	if err := Text(&buf, run, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"✗ gap.max <= 120ms",
		"category:complex",
		"offenders: " + reporttest.StallPromptID + " (" + reporttest.StallRequestID + ")",
		"✓ ttft.p95 < 250ms",
		"verdicts: 2 of 4 thresholds crossed",
		"cold start: load 12.5 ms",
		"freezes; users think it crashed",
		"http://127.0.0.1:8080/v1/chat/completions (chat API)",
		"complex-02 (req-0012) error: cut",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("text report has ANSI escapes without Options.Color")
	}
	if strings.Contains(out, "tokens per event") {
		t.Errorf("text report warns about batching for a run with one token per event")
	}
}

func TestTextColor(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, reporttest.StallRun(), Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), ansiRed+"✗"+ansiReset; !strings.Contains(got, want) {
		t.Errorf("coloured text lacks a red ✗")
	}
}

func TestTextBatchedWarning(t *testing.T) {
	run := reporttest.StallRun()
	for i := range run.Requests {
		q := &run.Requests[i]
		if q.Category == "short" {
			q.OutputTokens = 2 * q.ContentEvents
		}
	}
	measure.Summarize(run)
	var buf bytes.Buffer
	if err := Text(&buf, run, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if want := "short: 2.00 tokens per event: the endpoint batches tokens, so gaps are per event"; !strings.Contains(out, want) {
		t.Errorf("text report lacks the batching warning %q:\n%s", want, out)
	}
	if strings.Contains(out, "complex: 1.00 tokens per event") {
		t.Errorf("text report warns for a category with one token per event")
	}
}

func TestTextTableAligned(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, reporttest.StallRun(), Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "scope ") {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatal("no table header")
	}
	width := len(lines[start])
	for _, l := range lines[start+1 : start+4] {
		if got := len(l); got != width {
			t.Errorf("row %q is %d bytes wide, header %d", l, got, width)
		}
	}
}
