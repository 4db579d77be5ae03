package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestBenchScrapesTheTarget: bench --scrape samples the target's own
// /metrics (tokenpulse serve's, known by name) into run.json; a scrape
// endpoint that refuses is a warning of a run that still passes.
func TestBenchScrapesTheTarget(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 5 * time.Millisecond, ITL: time.Millisecond, Tokens: 10, TokensPerEvent: 1})
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "6", "-c", "2",
		"--warmup", "1", "--out", out, "--no-history", "-q", "--scrape")
	if code != exitOK {
		t.Fatalf("exit %d, want 0:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc := run.Scrape
	if sc == nil || sc.URL != url+"/metrics" || sc.Samples < 1 || sc.Failed != 0 {
		t.Fatalf("scrape %+v (warnings %q)", sc, run.Warnings)
	}
	roles := map[string]string{}
	for _, s := range sc.Series {
		roles[s.Name] = s.Role
	}
	if roles["tokenpulse_server_queued_requests"] != runfile.RoleQueue || roles["tokenpulse_server_in_flight_requests"] != runfile.RoleRunning {
		t.Errorf("series %v: want tokenpulse serve's queue and in-flight gauges", roles)
	}

	out = t.TempDir()
	text, code = cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "4", "--warmup", "0",
		"--out", out, "--no-history", "-q", "--scrape=http://127.0.0.1:1/metrics")
	if code != exitOK {
		t.Fatalf("a failing scrape: exit %d, want 0:\n%s", code, text)
	}
	run, err = runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Scrape != nil || !strings.Contains(strings.Join(run.Warnings, "\n"), "--scrape http://127.0.0.1:1/metrics: none of") {
		t.Errorf("scrape %+v, warnings %q", run.Scrape, run.Warnings)
	}
}

// TestBenchScrapeUsage: a scrape URL that is not http(s), a series named
// without --scrape, a URL after a bare --scrape, and --scrape with the
// A/B (whose two models share one server's gauges) are errors of use.
func TestBenchScrapeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--scrape=ftp://x/metrics"},
		{"bench", "--scrape=metrics"},
		{"bench", "--scrape-series", "x"},
		{"bench", "--scrape", "http://127.0.0.1:9/metrics"},
		{"bench", "--model-b", "../../internal/fixture/testdata/models/stories260K-Q8_0.gguf", "--scrape"},
	} {
		if text, code := cliRun(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", args, code, exitUsage, text)
		}
	}
	if text, _ := cliRun(t, "bench", "--scrape", "http://h/metrics"); !strings.Contains(text, "write --scrape=http://h/metrics") {
		t.Errorf("no hint for --scrape URL:\n%s", text)
	}
}
