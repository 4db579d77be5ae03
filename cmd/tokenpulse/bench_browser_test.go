package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/browser"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestBenchBrowserUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--render", "frame"},
		{"--cpu-throttle", "4"},
		{"--browser", "--render", "sometimes"},
		{"--browser", "--render", "frame,frame"},
		{"--browser", "--cpu-throttle", "0.5"},
		{"--browser", "-c", "2"},
		{"--browser", "--rate", "5"},
		{"--browser", "--api", "completions"},
		{"--browser", "--input", "#q"},
		{"--browser", "--page", "http://127.0.0.1:1/", "--input", "#q", "--send", "#go"},
		{"--browser", "--page", "http://127.0.0.1:1/", "--input", "#q", "--send", "#go", "--output", "#a", "--render", "frame", "--url", "http://127.0.0.1:1"},
		{"--browser", "--page", "http://127.0.0.1:1/", "--input", "#q", "--send", "#go", "--output", "#a"},
	} {
		text, code := cliRun(t, append([]string{"bench", "--no-history", "-q", "--out", t.TempDir()}, args...)...)
		if code != exitUsage {
			t.Errorf("bench %s: exit %d, want %d:\n%s", strings.Join(args, " "), code, exitUsage, text)
		}
	}
}

// TestBenchBrowserAgainstMock runs bench --browser as a user would, with
// two render strategies: the run file holds each request's paints beside
// its arrivals, the measured visible metrics per strategy, and the
// session's record.
func TestBenchBrowserAgainstMock(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	url := startMock(t, mock.Profile{TTFT: 40 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 8, TokensPerEvent: 1})
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--browser", "--render", "per-token,frame", "--url", url, "--suite", writeBenchSuite(t, "30s"),
		"-n", "3", "--warmup", "1", "--out", out, "--no-history", "-q", "--report", "html",
		"--threshold", "painted_ttft.p50 < 30s")
	if code != exitOK {
		t.Fatalf("exit %d, want 0:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	b := run.Config.Browser
	if b == nil || b.Page != "embedded" || len(b.Renders) != 2 || b.CPUThrottle != 1 || b.RelayHoldMs.Count == 0 {
		t.Fatalf("config.browser = %+v", b)
	}
	if got := len(run.Requests); got != 8 {
		t.Fatalf("%d requests, want 2 × (1 warm-up + 3)", got)
	}
	for _, q := range run.Requests {
		if q.Paint == nil || !q.Paint.Trusted || len(q.Paint.PaintNS) != len(q.TokenTimesNS) || len(q.TokenTimesNS) == 0 {
			t.Fatalf("request %d: paint %+v for %d events", q.Index, q.Paint, len(q.TokenTimesNS))
		}
	}
	for _, r := range []string{"per-token", "frame"} {
		g, ok := run.Summary.Renders[r]
		if !ok || g.Requests != 3 || g.PaintedTTFTMs.Count != 3 || g.PaintGapMs.Count == 0 {
			t.Errorf("summary.renders[%s] = %+v", r, g)
		}
	}
	judged := false
	for _, v := range run.Verdicts {
		if strings.HasPrefix(v.Rule, "painted_ttft") {
			judged = v.Judged() && v.Passed
		}
	}
	if !judged {
		t.Errorf("painted_ttft.p50 was not judged and passed: %+v", run.Verdicts)
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `id="browser"`) || strings.Count(string(html), `class="chart layers"`) != 2 {
		t.Errorf("the HTML report has no browser section with a layered timeline per render strategy")
	}
}
