package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/internal/store"
	"github.com/tokenpulse/tokenpulse/repeats"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/sweep"
)

// startMockParallel serves the mock with profile p generating at most
// parallel answers at once (the rest wait in the server's queue).
func startMockParallel(t *testing.T, p mock.Profile, parallel int) string {
	t.Helper()
	return serveMock(t, p, server.Options{Addr: "127.0.0.1:0", Parallel: parallel, Queue: 256})
}

// skipIfFrozen skips a test against the wall clock when the machine
// froze the measuring process during the sweep: the client's schedule
// lag p99 (how late it sent, which only a process that did not run
// makes large) passed maxMS at some step. The arithmetic the test checks
// then did not run; sweep.TestKneeAtTheQueueingPrediction checks it on
// a virtual clock whatever the machine.
func skipIfFrozen(t *testing.T, sw *sweep.Sweep, maxMS float64) {
	t.Helper()
	for _, st := range sw.Steps {
		if st.LagP99Ms > maxMS {
			t.Skipf("the machine froze the test process: at %g requests/s the client's schedule lag p99 was %.1f ms (over %g ms)", st.Load, st.LagP99Ms, maxMS)
		}
	}
}

// TestSweepFindsTheQueueingKnee sweeps constant arrivals across the
// capacity of a mock that serves two answers at once, each taking
// S = TTFT + (tokens − 1)·ITL = 20 ms + 18 · 10 ms = 200 ms of the mock's
// own pacing (its deadlines are absolute, so S does not drift with load):
// c/S = 2 / 0.2 s = 10 requests/s. With arrivals exactly 1/λ apart (a
// D/D/2 queue) no request waits below 10/s; above it the queue grows by
// λ − 10 per second, so the i-th request waits about i·(S/2 − 1/λ):
// at 12.5/s the 38th waits about 38 · 20 ms ≈ 760 ms. The knee's limit
// is set wide here (5 times the low-load TTFT p95 of about 20 ms, and at
// least 150 ms above it): a freeze of this shared machine (0.2 to 2 s
// were seen) at 75 % of the capacity queues a request or two by up to
// its length, while the queue above capacity passes the limit by far.
// The knee must lie between the steps that bracket 10/s: 7.5 (25 %
// under: 67 ms of slack per pair of requests) and 12.5 (25 % over). A schedule at the wrong rate, a knee read from another
// figure or a step off by one breaks it. And the server cannot deliver
// more than 10 answers/s whatever the offered load: the achieved rate
// above the capacity stays under it (it can only be lower, as the
// run's span includes the last answers' queueing).
func TestSweepFindsTheQueueingKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("a sweep of 4 steps takes about 20 s")
	}
	const ttft, itl, tokens = 20 * time.Millisecond, 10 * time.Millisecond, 19
	url := startMockParallel(t, mock.Profile{TTFT: ttft, ITL: itl, Tokens: tokens, TokensPerEvent: 1}, 2)
	service := ttft + (tokens-1)*itl
	capacity := 2 / service.Seconds()
	out := t.TempDir()
	text, code := cliRun(t, "sweep", "--url", url, "--suite", writeBenchSuite(t, "30s"), "--rates", "5,7.5,12.5,15",
		"--knee-factor", "5", "--knee-floor", "150ms", "--arrival", "constant", "-n", "40", "--warmup", "0", "--max-tokens", "19", "--out", out, "--no-history", "-q", "--error-budget", "none")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	sw, err := sweep.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	skipIfFrozen(t, sw, 50)
	if len(sw.Steps) != 4 || sw.Kind != sweep.KindRate {
		t.Fatalf("%d steps of %s, want 4 rate steps", len(sw.Steps), sw.Kind)
	}
	k := sw.Knee
	if k == nil {
		t.Fatalf("no knee found:\n%s", text)
	}
	if !(k.Below < capacity && capacity <= k.Load) || k.Below != 7.5 || k.Load != 12.5 {
		t.Errorf("knee between %g and %g, want between 7.5 and 12.5 around the predicted %g requests/s\n%s", k.Below, k.Load, capacity, text)
	}
	for _, st := range sw.Steps {
		run, err := runfile.Load(filepath.Join(out, st.Dir, runFileName))
		if err != nil {
			t.Fatal(err)
		}
		if run.Config.Rate != st.Load || run.Config.Requests != 40 {
			t.Errorf("step %s: run at %g with %d requests", st.Dir, run.Config.Rate, run.Config.Requests)
		}
		if st.Load > capacity && st.AchievedPerS > capacity*1.02 {
			t.Errorf("at %g requests/s the server delivered %.2f/s, more than its capacity %g", st.Load, st.AchievedPerS, capacity)
		}
		// No request answers before the mock's own TTFT.
		if st.TTFTP50Ms < float64(ttft)/1e6 {
			t.Errorf("at %g: TTFT p50 %.1f ms under the mock's %v", st.Load, st.TTFTP50Ms, ttft)
		}
	}
	for _, f := range []string{"sweep.html", sweep.FileName} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(text, "knee (requests/s): between 7.5 and 12.5") {
		t.Errorf("the table does not name the knee:\n%s", text)
	}
}

// TestSweepFindMax searches the capacity of the same kind of mock (S =
// 10 + 9·5 = 55 ms, two at once: 36.4 requests/s) under "TTFT p95 below
// 60 ms", which holds while nothing queues (TTFT about 10 ms) and fails
// once the queue grows. The search must end between passing and failing
// rates that bracket the capacity within its resolution.
func TestSweepFindMax(t *testing.T) {
	if testing.Short() {
		t.Skip("a search of several steps")
	}
	url := startMockParallel(t, mock.Profile{TTFT: 10 * time.Millisecond, ITL: 5 * time.Millisecond, Tokens: 10, TokensPerEvent: 1}, 2)
	capacity := 2 / 0.055
	out := t.TempDir()
	text, code := cliRun(t, "sweep", "--url", url, "--suite", writeBenchSuite(t, "30s"), "--find-max", "--start-rate", "10",
		"--resolution", "25%", "--max-steps", "6", "--threshold", "ttft.p95 < 60ms",
		"--arrival", "constant", "-n", "30", "--warmup", "0", "--max-tokens", "10", "--out", out, "--no-history", "-q", "--error-budget", "none")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	sw, err := sweep.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	skipIfFrozen(t, sw, 15)
	r := sw.Search
	if r == nil || r.Capacity == 0 {
		t.Fatalf("no capacity: %+v\n%s", r, text)
	}
	// On a quiet machine 10 and 20 pass, 40 fails, and the bisection
	// ends between 30 and 35 or 35 and 40. A stall of a busy machine can
	// only fail a step early, never pass one past the capacity: at 10 %
	// over it the queue already puts TTFT p95 near 70 ms. So the search
	// must find some rate (10/s is 27 % of the capacity, 45 ms of slack
	// per pair) and none beyond 1.1 times the capacity.
	if r.Capacity < 10 || r.Capacity > capacity*1.1 || (r.FailedAt != 0 && r.FailedAt <= r.Capacity) {
		t.Errorf("capacity %g (failed at %g), want it in [10, %.1f]\n%s", r.Capacity, r.FailedAt, capacity*1.1, text)
	}
	if r.Steps != len(sw.Steps) || r.Steps > 6 {
		t.Errorf("%d steps recorded, %d in the search, at most 6", len(sw.Steps), r.Steps)
	}
	// The steps are judged on the flag's threshold (and the suite's).
	if !strings.Contains(strings.Join(sw.Thresholds, ";"), "ttft.p95 < 60ms") {
		t.Errorf("thresholds %q", sw.Thresholds)
	}
	// report re-renders a sweep directory.
	if err := os.Remove(filepath.Join(out, "sweep.html")); err != nil {
		t.Fatal(err)
	}
	if text, code := cliRun(t, "report", out); code != exitOK || !strings.Contains(text, "capacity under the thresholds") {
		t.Errorf("report of the sweep: exit %d\n%s", code, text)
	}
	if _, err := os.Stat(filepath.Join(out, "sweep.html")); err != nil {
		t.Error(err)
	}

	// Usage errors come before anything is measured.
	for _, args := range [][]string{
		{"sweep", "--url", url},
		{"sweep", "--url", url, "--rates", "1,2", "--find-max"},
		{"sweep", "--url", url, "--rates", "1,x"},
		{"sweep", "--url", url, "--concurrencies", "1.5"},
		{"sweep", "--url", url, "--rates", "1", "--rate", "2"},
		{"sweep", "--url", url, "--rates", "1", "--resolution", "5%"},
		{"sweep", "--url", url, "--concurrencies", "1,2", "--arrival", "gamma"},
		{"sweep", "--url", url, "--rates", "1,2", "--report", "html"},
		{"sweep", "--url", url, "--rates", "1,2", "--repeat", "3"},
	} {
		if text, code := cliRun(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, text)
		}
	}
}

// TestRepeatAndCompare runs the same configuration three times, checks
// the repeats file against the runs' own figures, and compares two sets:
// a set against itself has no regression; against a mock 145 ms slower to
// the first token, TTFT regressed (Welch on three runs a side).
func TestRepeatAndCompare(t *testing.T) {
	fast := startMock(t, mock.Profile{TTFT: 5 * time.Millisecond, ITL: time.Millisecond, Tokens: 6, TokensPerEvent: 1})
	slow := startMock(t, mock.Profile{TTFT: 150 * time.Millisecond, ITL: time.Millisecond, Tokens: 6, TokensPerEvent: 1})
	suite := writeBenchSuite(t, "30s")
	set := func(url string) string {
		out := t.TempDir()
		text, code := cliRun(t, "bench", "--url", url, "--suite", suite, "--repeat", "3", "-n", "8", "--warmup", "1",
			"--out", out, "--no-history", "-q", "--error-budget", "none")
		if code != exitOK {
			t.Fatalf("exit %d:\n%s", code, text)
		}
		return out
	}
	a, b := set(fast), set(slow)
	s, err := repeats.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 3 {
		t.Fatalf("runs %v, want 3", s.Runs)
	}
	f, _ := s.Figure("ttft.p95")
	for i, dir := range s.Runs {
		run, err := runfile.Load(filepath.Join(a, dir, runFileName))
		if err != nil {
			t.Fatal(err)
		}
		if f.Values[i] != run.Summary.Overall.TTFTMs.P95 {
			t.Errorf("run %s: repeats say TTFT p95 %v, its summary %v", dir, f.Values[i], run.Summary.Overall.TTFTMs.P95)
		}
	}
	if f.N != 3 || !(f.CILow <= f.Mean && f.Mean <= f.CIHigh) || f.SD <= 0 {
		t.Errorf("ttft.p95 over the runs: %+v", f.Summary)
	}
	if text, code := cliRun(t, "compare", a, a); code != exitOK || !strings.Contains(text, "welch") {
		t.Errorf("a set against itself: exit %d\n%s", code, text)
	}
	text, code := cliRun(t, "compare", a, b)
	if code != exitRegression || !strings.Contains(text, "ttft.p95") {
		t.Errorf("slower TTFT: exit %d, want 98\n%s", code, text)
	}
	repeatHeaderNamesRuns(t, text, a, s.Runs[0])
	// A repeats file written before it named its start and device: they
	// are read from its first run.
	path := filepath.Join(a, repeats.FileName)
	var old map[string]any
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &old) != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	delete(old, "started_at")
	delete(old, "device")
	if b, err := json.Marshal(old); err != nil || os.WriteFile(path, b, 0o644) != nil {
		t.Fatalf("rewriting %s: %v", path, err)
	}
	text, _ = cliRun(t, "compare", a, b)
	repeatHeaderNamesRuns(t, text, a, s.Runs[0])
}

// repeatHeaderNamesRuns checks that compare's text names the base set's
// first run's start time and device, not a zero time and "-".
func repeatHeaderNamesRuns(t *testing.T, text, dir, first string) {
	t.Helper()
	run, err := runfile.Load(filepath.Join(dir, first, runFileName))
	if err != nil {
		t.Fatal(err)
	}
	start := run.StartedAt.Format(time.RFC3339)
	if strings.Contains(text, "0001-01-01") || !strings.Contains(text, start) || run.Device.Key() == "" || !strings.Contains(text, run.Device.Key()) {
		t.Errorf("compare of repeats names neither the start %s nor the device %q:\n%s", start, run.Device.Key(), text)
	}
}

// TestSweepStartsTheEmbeddedServerOnce sweeps the embedded server on the
// bundled model: every step measures the same server (one URL), and only
// the first has the cold request and the cold-start breakdown.
func TestSweepStartsTheEmbeddedServerOnce(t *testing.T) {
	out := t.TempDir()
	text, code := cliRun(t, "sweep", "--concurrencies", "1,2", "-n", "2", "--warmup", "0", "--max-tokens", "4",
		"--out", out, "--no-history", "-q", "--error-budget", "none", "--suite", writeBenchSuite(t, "30s"))
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	sw, err := sweep.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Kind != sweep.KindConcurrency || len(sw.Steps) != 2 || sw.ColdStart == nil {
		t.Fatalf("sweep %+v", sw)
	}
	for i, st := range sw.Steps {
		run, err := runfile.Load(filepath.Join(out, st.Dir, runFileName))
		if err != nil {
			t.Fatal(err)
		}
		if run.Target.URL != sw.Target.URL || run.Target.Backend != "embedded" {
			t.Errorf("step %d measured %s (%s), the sweep's server is %s", i+1, run.Target.URL, run.Target.Backend, sw.Target.URL)
		}
		if run.Config.Concurrency != int(st.Load) {
			t.Errorf("step %d: concurrency %d, want %g", i+1, run.Config.Concurrency, st.Load)
		}
		colds := 0
		for _, q := range run.Requests {
			if q.Cold {
				colds++
			}
		}
		if first := i == 0; (colds == 1) != first || (run.ColdStart != nil) != first || run.Config.Cold != first {
			t.Errorf("step %d: %d cold requests, cold start %v, config cold %v; want them in the first step only", i+1, colds, run.ColdStart != nil, run.Config.Cold)
		}
	}
}

// TestSweepUsageErrorsNameTheFlag checks that each usage error exits 2
// and names the flag to change, before anything is measured (the URL
// answers nothing).
func TestSweepUsageErrorsNameTheFlag(t *testing.T) {
	const url = "http://127.0.0.1:1"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rates", "0"}, "--rates"},
		{[]string{"--rates", "abc"}, "--rates"},
		{[]string{"--concurrencies", "0"}, "--concurrencies"},
		{[]string{"--rates", "1", "--find-max"}, "give only one"},
		{[]string{}, "give one of"},
		{[]string{"--find-max", "--start-rate", "0"}, "--start-rate"},
		{[]string{"--find-max", "--start-rate", "-1"}, "--start-rate"},
		{[]string{"--find-max", "--resolution", "0"}, "--resolution"},
		{[]string{"--find-max", "--resolution", "100%"}, "--resolution"},
		{[]string{"--find-max", "--max-steps", "1"}, "--max-steps"},
		{[]string{"--rates", "1", "--knee-factor", "0.5"}, "--knee-factor"},
		{[]string{"--concurrencies", "1,2", "--browser"}, "--browser"},
		{[]string{"--rates", "1,2", "--browser"}, "--browser"},
	} {
		args := append([]string{"sweep", "--url", url}, c.args...)
		text, code := cliRun(t, args...)
		if code != exitUsage || !strings.Contains(text, c.want) || strings.Contains(text, "goroutine") {
			t.Errorf("%q: exit %d, want %d with %q:\n%s", args, code, exitUsage, c.want, text)
		}
	}
}

// TestSweepRecordsEachStep: each step of a sweep is a run, recorded in
// the history as bench records one (it was not: a later bench at the
// same load had no base to compare with); --no-history records none.
func TestSweepRecordsEachStep(t *testing.T) {
	out := t.TempDir()
	hist := filepath.Join(t.TempDir(), "history.db")
	text, code := cliRun(t, "sweep", "--concurrencies", "1,2", "-n", "2", "--warmup", "0", "--max-tokens", "4",
		"--out", out, "--history", hist, "-q", "--error-budget", "none", "--suite", writeBenchSuite(t, "30s"))
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	s, err := store.OpenRead(hist)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.List(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || strings.Count(text, "recorded as run") != 2 {
		t.Fatalf("%d runs in the history, want one per step (2):\n%s", len(es), text)
	}

	hist2 := filepath.Join(t.TempDir(), "history.db")
	text, code = cliRun(t, "sweep", "--concurrencies", "1", "-n", "1", "--warmup", "0", "--max-tokens", "4",
		"--out", t.TempDir(), "--history", hist2, "--no-history", "-q", "--error-budget", "none", "--suite", writeBenchSuite(t, "30s"))
	if _, err := os.Stat(hist2); code != exitOK || !os.IsNotExist(err) {
		t.Errorf("--no-history: exit %d, history %v (want none):\n%s", code, err, text)
	}
}
