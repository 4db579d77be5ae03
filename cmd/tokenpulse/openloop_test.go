package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// measured returns the run's measured requests (neither cold nor warm-up).
func measured(run *runfile.Run) []runfile.Request {
	var out []runfile.Request
	for _, r := range run.Requests {
		if !r.Cold && !r.Warmup {
			out = append(out, r)
		}
	}
	return out
}

func TestBenchRateRecordsSchedule(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1})
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "--rate", "50", "--arrival", "constant",
		"-n", "8", "--warmup", "1", "--seed", "3", "--out", out, "--no-history", "-q", "--error-budget", "none")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := run.Config
	if c.Arrival != "constant" || c.Rate != 50 || c.Requests != 8 || c.Concurrency != defaultCeiling {
		t.Errorf("config: arrival %q rate %v requests %d concurrency %d; want constant, 50, 8, the default ceiling", c.Arrival, c.Rate, c.Requests, c.Concurrency)
	}
	if !run.Requests[0].Warmup || run.Requests[0].ScheduledNS != nil {
		t.Errorf("the warm-up request is scheduled: %+v", run.Requests[0])
	}
	ms := measured(run)
	if len(ms) != 8 {
		t.Fatalf("%d measured requests, want 8", len(ms))
	}
	for i, r := range ms {
		if r.ScheduledNS == nil || *r.ScheduledNS != int64(i)*int64(20*time.Millisecond) {
			t.Errorf("request %d: scheduled_ns %v, want %d", i, r.ScheduledNS, int64(i)*int64(20*time.Millisecond))
		}
		if r.ScheduleLagNS < 0 {
			t.Errorf("request %d started %d ns before it was due", i, -r.ScheduleLagNS)
		}
		if !r.OK() {
			t.Errorf("request %d: %s", i, r.Error)
		}
	}
	o := run.Summary.Overall
	if o.ScheduleLagMs.Count != 8 || o.ScheduledTTFTMs.Count != 8 || o.RequestsPerS <= 0 || o.OutputTokensPerS <= 0 {
		t.Errorf("summary: lag %+v, TTFT from schedule count %d, %v req/s, %v tok/s", o.ScheduleLagMs, o.ScheduledTTFTMs.Count, o.RequestsPerS, o.OutputTokensPerS)
	}
	// The measured span is at least the schedule's 140 ms.
	if o.SpanS < 0.14 {
		t.Errorf("span %v s, shorter than the schedule", o.SpanS)
	}
}

func TestBenchRateGammaDurationIsSeeded(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 2, TokensPerEvent: 1})
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "--rate", "40", "--arrival", "gamma",
		"--burstiness", "2", "--duration", "300ms", "--ramp", "100ms", "--warmup", "0", "--seed", "9", "--out", out, "--no-history", "-q", "--error-budget", "none")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := bench.Arrival{Process: bench.ArrivalGamma, Rate: 40, Burstiness: 2, Duration: 300 * time.Millisecond, Ramp: 100 * time.Millisecond}.Schedule(9)
	if err != nil {
		t.Fatal(err)
	}
	c := run.Config
	if c.Arrival != "gamma" || c.Burstiness != 2 || c.DurationMS != 300 || c.RampMS != 100 || c.Requests != len(want) {
		t.Errorf("config %+v, want gamma, burstiness 2, 300 ms, ramp 100 ms, %d requests", c, len(want))
	}
	ms := measured(run)
	if len(ms) != len(want) {
		t.Fatalf("%d requests, the seeded schedule holds %d (-n 30 is no cap without being given)", len(ms), len(want))
	}
	for i, r := range ms {
		if r.ScheduledNS == nil || *r.ScheduledNS != int64(want[i]) {
			t.Errorf("request %d: scheduled_ns %v, want %d from the seeded schedule", i, r.ScheduledNS, want[i])
		}
	}
}

func TestBenchRateCeilingWarns(t *testing.T) {
	// Each answer takes over 100 ms, one at a time (-c 1), due every 20
	// ms: every request after the first waits for the slot.
	url := startMock(t, mock.Profile{TTFT: 100 * time.Millisecond, ITL: time.Millisecond, Tokens: 2, TokensPerEvent: 1})
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "--rate", "50", "--arrival", "constant", "-c", "1",
		"-n", "4", "--warmup", "0", "--out", out, "--no-history", "-q", "--error-budget", "none")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	ms := measured(run)
	for i, r := range ms[1:] {
		if r.SlotWaitNS <= 0 || r.ScheduleLagNS < r.SlotWaitNS {
			t.Errorf("request %d: slot wait %d, lag %d: want a wait, inside the lag", i+1, r.SlotWaitNS, r.ScheduleLagNS)
		}
		// TTFT stays from t_start; the TTFT from the schedule adds the lag.
		if r.TTFTNS > 10*int64(time.Second) {
			t.Errorf("request %d: TTFT %d", i+1, r.TTFTNS)
		}
	}
	if run.Config.Concurrency != 1 || run.Summary.Overall.SlotWaits != len(ms)-1 {
		t.Errorf("concurrency %d, slot waits %d, want 1 and %d", run.Config.Concurrency, run.Summary.Overall.SlotWaits, len(ms)-1)
	}
	var saw bool
	for _, w := range run.Warnings {
		saw = saw || strings.Contains(w, "(-c) reached")
	}
	if !saw {
		t.Errorf("no warning of the ceiling: %q", run.Warnings)
	}
	lagged := false
	for _, w := range run.Warnings {
		lagged = lagged || strings.Contains(w, "did not keep the constant schedule")
	}
	if !lagged {
		t.Errorf("lag of over 80 ms per request not warned of: %q", run.Warnings)
	}
}

func TestBenchRateFlagsUsage(t *testing.T) {
	s := writeBenchSuite(t, "30s")
	for _, args := range [][]string{
		{"--arrival", "gamma"},
		{"--duration", "1s"},
		{"--rate", "0"},
		{"--rate", "-1"},
		{"--rate", "5", "--arrival", "uniform"},
		{"--rate", "5", "--burstiness", "2"},
		{"--rate", "5", "--arrival", "gamma", "--burstiness", "0"},
		{"--rate", "5", "--scenario", "rapid-fire"},
		{"--rate", "1e9", "--duration", "1h"},
	} {
		full := append([]string{"bench", "--url", "http://127.0.0.1:1", "--suite", s, "--no-history", "-q", "--out", t.TempDir()}, args...)
		if text, code := cliRun(t, full...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d:\n%s", args, code, exitUsage, text)
		}
	}
}

// TestBenchRateFlagsAreTheLibrarysRule: the open loop's values are
// checked by bench.Arrival.Validate alone, so the CLI refuses what the
// library refuses, with its words (the two disagreed on burstiness 0).
func TestBenchRateFlagsAreTheLibrarysRule(t *testing.T) {
	s := writeBenchSuite(t, "30s")
	for _, tt := range []struct {
		args []string
		a    bench.Arrival
	}{
		{[]string{"--rate", "5", "--arrival", "gamma", "--burstiness", "0"}, bench.Arrival{Process: bench.ArrivalGamma, Rate: 5, Max: 5}},
		{[]string{"--rate", "5", "--burstiness", "2"}, bench.Arrival{Process: bench.ArrivalPoisson, Rate: 5, Burstiness: 2, Max: 5}},
		{[]string{"--rate", "5", "--arrival", "uniform"}, bench.Arrival{Process: "uniform", Rate: 5, Max: 5}},
		{[]string{"--rate", "-1"}, bench.Arrival{Process: bench.ArrivalPoisson, Rate: -1, Max: 5}},
		{[]string{"--rate", "5", "--ramp", "-1s"}, bench.Arrival{Process: bench.ArrivalPoisson, Rate: 5, Max: 5, Ramp: -time.Second}},
	} {
		want := tt.a.Validate()
		if want == nil {
			t.Fatalf("%+v: the library takes it", tt.a)
		}
		full := append([]string{"bench", "--url", "http://127.0.0.1:1", "--suite", s, "-n", "5", "--no-history", "-q", "--out", t.TempDir()}, tt.args...)
		text, code := cliRun(t, full...)
		if code != exitUsage || !strings.Contains(text, want.Error()) {
			t.Errorf("%v: exit %d, %q; want %d with the library's %q", tt.args, code, text, exitUsage, want)
		}
	}
}
