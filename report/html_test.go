package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

func TestHTMLGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, reporttest.StallRun(), Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "html/stall.html", buf.Bytes())
}

func TestHTMLIsSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, reporttest.StallRun(), Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{"<script", "http-equiv=\"refresh\"", "<link", "@import", "<img", "<iframe"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	// No URL the browser would fetch: src=, href= and url() must be absent
	// (the target URL appears only as text).
	if m := regexp.MustCompile(`(?i)(\ssrc=|\shref=|url\()`).FindString(page); m != "" {
		t.Errorf("page references an external resource: %q", m)
	}
}

func TestHTMLOrder(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, reporttest.StallRun(), Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	// The verdict comes first, then the sections in reading order.
	marks := []string{
		`class="banner fail"`, "FAIL: 2 of 4 thresholds crossed", "gap.max &lt;= 120ms",
		`id="categories"`, `id="cold"`, `id="waterfall"`, `id="gaps"`, `id="timelines"`,
		`data-request-id="` + reporttest.StallRequestID + `"`, `class="stall"`,
		`id="experience"`, "freezes; users think it crashed", `id="verdicts"`, `id="methodology"`,
	}
	at := 0
	for _, m := range marks {
		i := strings.Index(page[at:], m)
		if i < 0 {
			t.Fatalf("after byte %d the page lacks %q (or it comes too early)", at, m)
		}
		at += i
	}
}

func TestHTMLPassBanner(t *testing.T) {
	run := reporttest.StallRun()
	for i := range run.Verdicts {
		run.Verdicts[i].Passed = true
	}
	var buf bytes.Buffer
	if err := HTML(&buf, run, Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, `class="banner pass"`) || !strings.Contains(page, "PASS: all 4 thresholds held") {
		t.Errorf("a run whose thresholds all held has no pass banner")
	}
	if !strings.Contains(page, "The longest stall") {
		t.Errorf("a passing run does not show the longest stall for reference")
	}
}

func TestHTMLEscapes(t *testing.T) {
	run := reporttest.StallRun()
	run.Target.Model = `<script>alert(1)</script>`
	run.Requests[reporttest.StallIndex].PromptID = `"><script>x</script>`
	run.Verdicts[0].Offenders[0].PromptID = run.Requests[reporttest.StallIndex].PromptID
	var buf bytes.Buffer
	if err := HTML(&buf, run, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<script") {
		t.Errorf("text from the run file reached the page unescaped")
	}
}
