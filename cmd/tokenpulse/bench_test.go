package main

import (
	"context"
	"encoding/xml"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// startMock serves the mock profile on a loopback port for the test's
// lifetime and returns its base URL.
func startMock(t *testing.T, p mock.Profile) string {
	t.Helper()
	return serveMock(t, p, server.Options{Addr: "127.0.0.1:0", Parallel: 64})
}

// serveMock serves the mock profile with the server options o on a
// loopback port for the test's lifetime and returns its base URL.
func serveMock(t *testing.T, p mock.Profile, o server.Options) string {
	t.Helper()
	srv, err := server.New(mock.New(p, nil), o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	if err := srv.WarmUp(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// loosesuite writes a two-category suite whose thresholds no loaded
// machine can cross, and one that a 300 ms stall crosses.
func writeBenchSuite(t *testing.T, complexLimit string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "suite.yaml")
	data := `name: test
language: en
categories:
  - name: short
    weight: 1
    max_tokens: 8
    thresholds: ["ttft.p95 < 30s"]
    prompts:
      - {id: s1, text: "What is two plus two?"}
      - {id: s2, text: "Name a colour."}
  - name: complex
    weight: 1
    max_tokens: 12
    thresholds: ["gap.max <= ` + complexLimit + `"]
    prompts:
      - {id: c1, text: "Compare apples and pears."}
      - {id: c2, text: "Compare trains and planes."}
`
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBenchAgainstMock(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 5 * time.Millisecond, ITL: time.Millisecond, Tokens: 10, TokensPerEvent: 1})
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "6", "-c", "2",
		"--warmup", "1", "--cold", "--out", out, "--no-history", "-q", "--report", "junit")
	if code != exitOK {
		t.Fatalf("exit %d, want 0:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(run.Requests), 1+1+6; got != want {
		t.Fatalf("%d requests recorded, want %d (cold, warm-up, measured)", got, want)
	}
	if !run.Requests[0].Cold || !run.Requests[1].Warmup {
		t.Errorf("first requests: cold=%v warmup=%v", run.Requests[0].Cold, run.Requests[1].Warmup)
	}
	if run.Target.Model != "mock" || run.Target.Backend != "mock" || run.Summary.Overall.Requests != 6 || run.Summary.Cold == nil {
		t.Errorf("target %+v, overall %d requests, cold %v", run.Target, run.Summary.Overall.Requests, run.Summary.Cold)
	}
	for _, r := range run.Requests {
		if !r.OK() || len(r.TokenTimesNS) == 0 || len(r.ServerTimesNS) != len(r.TokenTimesNS) {
			t.Errorf("request %d: error %q, %d tokens, %d server times", r.Index, r.Error, len(r.TokenTimesNS), len(r.ServerTimesNS))
		}
	}
	if len(run.Verdicts) != 3 {
		t.Errorf("verdicts = %+v, want the two suite thresholds and the error budget", run.Verdicts)
	}
	for _, v := range run.Verdicts {
		if !v.Passed {
			t.Errorf("verdict %s on %s failed: %+v", v.Rule, v.Scope, v)
		}
	}
	if !strings.Contains(text, "warm requests") || !strings.Contains(text, "complex") {
		t.Errorf("summary lacks the per-category table:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(out, "junit.xml")); err != nil {
		t.Errorf("--report junit wrote no junit.xml: %v", err)
	}
}

func TestBenchStallCrossesThreshold(t *testing.T) {
	// Every complex answer stalls 300 ms before its 5th token.
	url := startMock(t, mock.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 10, TokensPerEvent: 1,
		StallEvery: 5, Stall: 300 * time.Millisecond, StallMatch: "compare"})
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "120ms"), "-n", "4", "-c", "4",
		"--warmup", "0", "--out", out, "--no-history", "-q", "--report", "junit")
	if code != exitThreshold {
		t.Fatalf("exit %d, want %d (threshold crossed):\n%s", code, exitThreshold, text)
	}
	b, err := os.ReadFile(filepath.Join(out, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("junit.xml: %v", err)
	}
	failed := ""
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				failed += c.Name + ": " + c.Failure.Text
			}
		}
	}
	if !strings.Contains(failed, "gap.max") || !strings.Contains(failed, "c1") || !strings.Contains(failed, "c2") {
		t.Errorf("junit failures = %q, want gap.max naming c1 and c2", failed)
	}
	if strings.Contains(failed, "s1") || strings.Contains(failed, "s2") {
		t.Errorf("junit failures name a short prompt that never stalled: %q", failed)
	}
}

func TestBenchRapidFireAgainstMock(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 2 * time.Millisecond, ITL: 5 * time.Millisecond, Tokens: 40, TokensPerEvent: 1})
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "--scenario", "rapid-fire",
		"-n", "6", "--out", out, "--no-history", "-q", "--max-tokens", "40")
	if code != exitOK {
		t.Fatalf("exit %d, want 0:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Scenario == nil || len(run.Scenario.FollowUps) != 2 {
		t.Fatalf("scenario = %+v, want 2 follow-ups", run.Scenario)
	}
	for i, f := range run.Scenario.FollowUps {
		if f.TokensAfterAbort != 0 || f.ForeignEvents != 0 {
			t.Errorf("follow-up %d: %d tokens after the abort, %d foreign events; want 0 and 0", i, f.TokensAfterAbort, f.ForeignEvents)
		}
		if a := run.Requests[f.Interrupted]; !a.Aborted || len(a.TokenTimesNS) >= 40 {
			t.Errorf("follow-up %d: the interrupted answer ran on (%d tokens, aborted=%v)", i, len(a.TokenTimesNS), a.Aborted)
		}
	}
	if !strings.Contains(text, "the aborts were real") {
		t.Errorf("summary does not say the aborts were real:\n%s", text)
	}
}

func TestBenchEmbeddedColdFirst(t *testing.T) {
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--suite", writeBenchSuite(t, "30s"), "-n", "4", "--warmup", "1",
		"--out", out, "--no-history", "-q")
	if code != exitOK {
		t.Fatalf("exit %d, want 0:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Target.Backend != "embedded" || run.Target.ModelSHA256 == "" || run.Target.ContextLength == 0 {
		t.Errorf("target = %+v, want the embedded model described", run.Target)
	}
	if !run.Requests[0].Cold || run.ColdStart == nil || run.ColdStart.TotalMS <= 0 {
		t.Errorf("cold request %v, cold start %+v: want the first request cold with the warm-up breakdown", run.Requests[0].Cold, run.ColdStart)
	}
	if run.Summary.Cold == nil || run.Summary.Overall.Requests != 4 || run.Summary.Overall.Errors != 0 {
		t.Errorf("summary: cold %v, overall %d requests %d errors", run.Summary.Cold, run.Summary.Overall.Requests, run.Summary.Overall.Errors)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	suite := writeBenchSuite(t, "30s")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\ncategories:\n  - name: a\n    weight: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bench", "--api", "grpc"},
		{"bench", "--concurrency", "0"},
		{"bench", "--url", "ftp://x"},
		{"bench", "--threshold", "ttft.p95 < fast"},
		{"bench", "--tier", "supercomputer"},
		{"bench", "--suite", bad},
		{"bench", "--suite", "no-such-suite"},
		{"bench", "--suite", suite, "-H", "no colon"},
		{"bench", "--suite", suite, "--report", "pdf"},
		{"bench", "--suite", suite, "--publish", "ftp://bucket"},
		{"bench", "--suite", suite, "--scenario", "slow-loris"},
		{"bench", "--suite", suite, "--threshold", "[category:nope] gap.max <= 1s"},
		{"bench", "--suite", suite, "--error-budget", "lots"},
		{"bench", "--no-such-flag"},
	} {
		if text, code := cliRun(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", args, code, exitUsage, text)
		}
	}
}

func TestBenchTargetDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "2", "--warmup", "0",
		"--out", out, "--no-history", "-q")
	if code != exitFailure {
		t.Fatalf("exit %d, want %d:\n%s", code, exitFailure, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatalf("no run file after a failed run: %v", err)
	}
	for _, r := range run.Requests {
		if r.ErrorKind != "connect" {
			t.Errorf("request %d: error kind %q, want connect", r.Index, r.ErrorKind)
		}
	}
}

func TestBenchErrorBudget(t *testing.T) {
	// Half the requests fail with a 500 (seeded, so the count is fixed).
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1, ErrorRate: 0.5, Seed: 3})
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "10", "--warmup", "0",
		"--out", out, "--no-history", "-q")
	if code != exitThreshold {
		t.Fatalf("exit %d, want %d: failed requests must cross the default error budget\n%s", code, exitThreshold, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range run.Verdicts {
		if v.Rule == "errors.rate <= 1%" {
			found = true
			if v.Passed || len(v.Offenders) == 0 {
				t.Errorf("error budget verdict = %+v, want failed with offenders", v)
			}
		}
	}
	if !found {
		t.Errorf("no error-budget verdict in %+v", run.Verdicts)
	}
	// The same run with the budget turned off passes.
	if text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "10", "--warmup", "0",
		"--out", t.TempDir(), "--no-history", "-q", "--error-budget", "none"); code != exitOK {
		t.Errorf("--error-budget none: exit %d, want 0\n%s", code, text)
	}
}

func TestBenchUnsampledCategoryIsNotJudged(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1})
	out := t.TempDir()
	// One request cannot cover two categories.
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "1", "--warmup", "0",
		"--out", out, "--no-history", "-q")
	if code != exitOK {
		t.Fatalf("exit %d, want 0: a category with no request must not fail the run\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Config.SuiteThresholds) != 1 || len(run.Warnings) != 1 || !strings.Contains(run.Warnings[0], "was not measured") {
		t.Errorf("suite thresholds %v, warnings %q: want one category judged and one named as not measured", run.Config.SuiteThresholds, run.Warnings)
	}
}

func TestBenchStopsWhenCredentialsAreRefused(t *testing.T) {
	srv, err := server.New(mock.New(mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1}, nil),
		server.Options{Addr: "127.0.0.1:0", APIKey: "right-key", Parallel: 8})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	t.Setenv("TOKENPULSE_TEST_KEY", "wrong-key")
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", "http://"+ln.Addr().String(), "--suite", writeBenchSuite(t, "30s"), "-n", "20",
		"--warmup", "0", "--api-key-env", "TOKENPULSE_TEST_KEY", "--out", out, "--no-history", "-q")
	if code != exitFailure || !strings.Contains(text, "401") || !strings.Contains(text, "was refused") {
		t.Fatalf("exit %d, want %d with the 401 explained:\n%s", code, exitFailure, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Requests) >= 20 {
		t.Errorf("%d requests sent, want the run stopped at the first refusal", len(run.Requests))
	}
}

func TestBenchZeroRequestsIsUsageError(t *testing.T) {
	// A target that would answer, so that only the flag can stop the run.
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1})
	for _, n := range []string{"-n", "--requests"} {
		out := t.TempDir()
		text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), n, "0", "--warmup", "0",
			"--out", out, "--no-history", "-q")
		if code != exitUsage {
			t.Errorf("%s 0: exit %d, want %d\n%s", n, code, exitUsage, text)
		}
		if !strings.Contains(text, "--requests must be ≥ 1") {
			t.Errorf("%s 0: message %q does not say that --requests must be at least 1", n, text)
		}
		if _, err := os.Stat(filepath.Join(out, "run.json")); err == nil {
			t.Errorf("%s 0: a run file was written; a usage error must stop before the run", n)
		}
	}
}

// TestBenchRapidFireSaysConversationsAreCut checks that rapid-fire, which
// interrupts single questions, says so when the suite's sample holds
// conversations (asked as their first turn only), and only then.
func TestBenchRapidFireSaysConversationsAreCut(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 2 * time.Millisecond, ITL: 2 * time.Millisecond, Tokens: 20, TokensPerEvent: 1})
	for _, c := range []struct {
		suite string
		want  bool
	}{
		{filepath.Join("..", "..", "suite", "testdata", "conversations.yaml"), true},
		{writeBenchSuite(t, "30s"), false},
	} {
		out := t.TempDir()
		text, code := cliRun(t, "bench", "--url", url, "--suite", c.suite, "--scenario", "rapid-fire",
			"-n", "6", "--out", out, "--no-history", "-q", "--max-tokens", "20", "--error-budget", "none")
		if code != exitOK && code != exitThreshold {
			t.Fatalf("%s: exit %d:\n%s", c.suite, code, text)
		}
		run, err := runfile.Load(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		warned := false
		for _, w := range run.Warnings {
			warned = warned || strings.Contains(w, "as their first turn only")
		}
		if warned != c.want {
			t.Errorf("%s: warned about conversations %v, want %v (warnings %q)", c.suite, warned, c.want, run.Warnings)
		}
	}
}

// TestBenchFullEndpointURL: --url may be the full endpoint URL a user
// copies from an API's documentation; it once failed every request with
// "no route for /v1/chat/completions/v1/chat/completions". The path also
// picks --api, and an --api that contradicts it is a usage error.
func TestBenchFullEndpointURL(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 5})
	for _, tc := range []struct{ path, api string }{
		{"/v1/chat/completions", "chat"},
		{"/v1/completions/", "completions"},
	} {
		out := t.TempDir()
		text, code := cliRun(t, "bench", "--url", url+tc.path, "--suite", writeBenchSuite(t, "30s"), "-n", "2", "--warmup", "0",
			"--out", out, "--no-history", "-q")
		if code != exitOK {
			t.Fatalf("%s: exit %d, want 0:\n%s", tc.path, code, text)
		}
		run, err := runfile.Load(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		if run.Target.API != tc.api || run.Target.URL != url+"/v1" || run.Summary.Overall.Errors != 0 {
			t.Errorf("%s: target %+v, %d errors; want API %s at %s/v1", tc.path, run.Target, run.Summary.Overall.Errors, tc.api, url)
		}
	}
	if text, code := cliRun(t, "bench", "--url", url+"/v1/completions", "--api", "chat", "-n", "1", "--no-history"); code != exitUsage {
		t.Errorf("--api chat with a completions URL: exit %d, want %d:\n%s", code, exitUsage, text)
	}
}

// TestBenchDeadTargetStopsAtOnce: with nothing listening at --url the run
// stops after its first requests fail to connect, says why, and gives no
// advice about categories it never reached; it once sent all 62 requests
// and printed "connection refused" only on its last line.
func TestBenchDeadTargetStopsAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "-n", "60", "--out", out, "--no-history")
	if code != exitFailure || !strings.Contains(text, "could not connect to the target") || !strings.Contains(text, "connection refused") {
		t.Fatalf("exit %d, want %d naming the refused connection:\n%s", code, exitFailure, text)
	}
	if strings.Contains(text, "raise --requests") {
		t.Errorf("advises raising --requests for a target that is not there:\n%s", text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Requests) > 10 || run.StopReason == "" || !run.Interrupted {
		t.Errorf("%d requests sent, stop reason %q, interrupted %v; want a few, the reason, interrupted", len(run.Requests), run.StopReason, run.Interrupted)
	}
}

// TestDeadTargetRule: three refused connections in a row before any
// answer stop a run; a run whose target answered once is never stopped by
// later refusals (a server restarting is a finding, not a dead target).
func TestDeadTargetRule(t *testing.T) {
	refused := &runfile.Request{Error: "connect: refused", ErrorKind: "connect"}
	answered := &runfile.Request{Status: 200}
	stop := deadTarget(3, "http://h")
	for i := range 2 {
		if err := stop(refused); err != nil {
			t.Fatalf("stopped after %d refusals", i+1)
		}
	}
	if err := stop(refused); err == nil || !strings.Contains(err.Error(), "http://h") {
		t.Errorf("third refusal: %v, want a stop naming the target", err)
	}
	stop = deadTarget(3, "http://h")
	stop(answered)
	for range 10 {
		if err := stop(refused); err != nil {
			t.Fatalf("stopped after the target answered: %v", err)
		}
	}
}
