package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/store"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// cliRun executes the root command with args and returns its output and
// exit code as main would.
func cliRun(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return out.String(), exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return out.String() + ee.Error(), ee.code
	}
	if isUsage(err) {
		return err.Error(), exitUsage
	}
	return out.String() + err.Error(), exitFailure
}

// seededRun writes a run of 40 warm requests (60 tokens each, gaps near
// itlMS with log-normal jitter) started at start, from a seeded generator.
func seededRun(t *testing.T, dir string, seed uint64, itlMS float64, start time.Time) (string, *runfile.Run) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	run := &runfile.Run{
		SchemaVersion: runfile.SchemaVersion,
		StartedAt:     start,
		Target:        runfile.Target{URL: "http://127.0.0.1:9/v1", Model: "mock", Backend: "mock"},
		Device:        runfile.Device{Hostname: "bench-host", CPUModel: "Xeon"},
		Config:        runfile.Config{Suite: "smoke"},
	}
	for i := range 40 {
		ts := int64((150 + rng.NormFloat64()*15) * 1e6)
		times := []int64{ts}
		for range 59 {
			ts += int64(itlMS * math.Exp(rng.NormFloat64()*0.15) * 1e6)
			times = append(times, ts)
		}
		cat := "short"
		if i%2 == 1 {
			cat = "complex"
		}
		run.Requests = append(run.Requests, runfile.Request{Index: i, RequestID: fmt.Sprint("r", i), Category: cat, PromptID: "p", Status: 200,
			TTFTNS: times[0], E2ENS: ts, OutputTokens: 60, ContentEvents: 60, TokenTimesNS: times})
	}
	measure.Summarize(run)
	path := filepath.Join(dir, start.Format("150405")+".json")
	if err := run.Write(path); err != nil {
		t.Fatal(err)
	}
	return path, run
}

func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	base, _ := seededRun(t, dir, 1, 20, start)
	same, _ := seededRun(t, dir, 2, 20, start.Add(time.Minute))
	slow, _ := seededRun(t, dir, 3, 30, start.Add(2*time.Minute))

	out, code := cliRun(t, "compare", base, same)
	if code != exitOK || strings.Contains(out, "REGRESSION") || !strings.Contains(out, "no regression") {
		t.Errorf("same profile: exit %d, output:\n%s", code, out)
	}
	out, code = cliRun(t, "compare", base, slow)
	if code != exitRegression || !strings.Contains(out, "REGRESSION") || !strings.Contains(out, "category:complex") {
		t.Errorf("20 → 30 ms: exit %d (want %d), output:\n%s", code, exitRegression, out)
	}
	// A 90 % tolerance swallows a 50 % slowdown (its max gap moves about 65 %).
	if _, code := cliRun(t, "compare", base, slow, "--tolerance", "90%", "--tail-tolerance", "90%", "--extreme-tolerance", "90%"); code != exitOK {
		t.Errorf("--tolerance 90%%: exit %d, want 0", code)
	}
	out, code = cliRun(t, "compare", base, slow, "--json")
	if code != exitRegression || !strings.Contains(out, `"status": "regressed"`) {
		t.Errorf("--json: exit %d, output lacks a regressed change:\n%.400s", code, out)
	}

	usage := []struct {
		name string
		args []string
	}{
		{"one file without against", []string{"compare", base}},
		{"both forms", []string{"compare", base, slow, "--against", "last"}},
		{"bad tolerance", []string{"compare", base, slow, "--tolerance", "lots"}},
		{"bad alpha", []string{"compare", base, slow, "--alpha", "2"}},
		{"bad floor", []string{"compare", base, slow, "--floor", "2"}},
		{"three files", []string{"compare", base, slow, same}},
	}
	for _, tc := range usage {
		t.Run(tc.name, func(t *testing.T) {
			if out, code := cliRun(t, tc.args...); code != exitUsage {
				t.Errorf("exit %d, want %d; output:\n%s", code, exitUsage, out)
			}
		})
	}
	if _, code := cliRun(t, "compare", filepath.Join(dir, "missing.json"), slow); code != exitFailure {
		t.Errorf("missing file: exit %d, want %d", code, exitFailure)
	}
}

func TestCompareAgainstLast(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history.db")
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	_, first := seededRun(t, dir, 1, 20, start)
	_, second := seededRun(t, dir, 2, 20, start.Add(time.Minute))
	slowPath, slow := seededRun(t, dir, 3, 30, start.Add(2*time.Minute))

	// Nothing recorded yet.
	if out, code := cliRun(t, "compare", slowPath, "--against", "last", "--history", hist); code != exitFailure || !strings.Contains(out, "no earlier run") {
		t.Errorf("empty history: exit %d, output:\n%s", code, out)
	}
	var ids []int64
	for _, r := range []*runfile.Run{first, second, slow} { // the bench command records every run, the new one too
		id, err := store.Record(hist, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	out, code := cliRun(t, "compare", slowPath, "--against", "last", "--history", hist)
	if code != exitRegression || !strings.Contains(out, "history run 2 ") {
		t.Errorf("--against last: exit %d (want %d), output:\n%s", code, exitRegression, out)
	}
	out, code = cliRun(t, "compare", slowPath, "--against", "1", "--history", hist)
	if code != exitRegression || !strings.Contains(out, "history run 1 ") {
		t.Errorf("--against 1: exit %d, output:\n%s", code, out)
	}
	if out, code := cliRun(t, "compare", slowPath, "--against", "yesterday", "--history", hist); code != exitUsage {
		t.Errorf("--against yesterday: exit %d, want %d; output:\n%s", code, exitUsage, out)
	}

	// history lists the three runs, newest first, under one heading.
	out, code = cliRun(t, "history", "--history", hist)
	if code != exitOK {
		t.Fatalf("history: exit %d, output:\n%s", code, out)
	}
	if strings.Count(out, "http://127.0.0.1:9  model mock  device bench-host") != 1 {
		t.Errorf("history: want one group heading, got:\n%s", out)
	}
	i3, i2, i1 := strings.Index(out, "\n  3 "), strings.Index(out, "\n  2 "), strings.Index(out, "\n  1 ")
	if i3 < 0 || i2 < 0 || i1 < 0 || !(i3 < i2 && i2 < i1) {
		t.Errorf("history: want runs 3, 2, 1 in that order, got:\n%s", out)
	}
	out, _ = cliRun(t, "history", "--history", hist, "--limit", "1")
	if strings.Contains(out, "\n  2 ") || !strings.Contains(out, "\n  3 ") {
		t.Errorf("history --limit 1: got:\n%s", out)
	}
	out, _ = cliRun(t, "history", "--history", hist, "--target", "http://elsewhere")
	if !strings.Contains(out, "no runs recorded") {
		t.Errorf("history of another target: got:\n%s", out)
	}
	out, _ = cliRun(t, "history", "--history", hist, "--json")
	if !strings.Contains(out, `"ID": 3`) || !strings.Contains(out, `"TargetURL": "http://127.0.0.1:9"`) {
		t.Errorf("history --json: got:\n%.400s", out)
	}
	if _, code := cliRun(t, "history", "--history", hist, "--limit", "-1"); code != exitUsage {
		t.Errorf("--limit -1: exit %d, want %d", code, exitUsage)
	}
}

// TestCompareAgainstRefusesOtherSettings: --against picks no base made
// with another suite or max tokens without saying so; it names each
// difference and --against-any compares anyway, noting them.
func TestCompareAgainstRefusesOtherSettings(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history.db")
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	_, base := seededRun(t, dir, 1, 20, start)
	base.Config.Suite, base.Config.MaxTokens = "zh-medical", 256
	if _, err := store.Record(hist, base); err != nil {
		t.Fatal(err)
	}
	_, cur := seededRun(t, dir, 3, 30, start.Add(time.Minute))
	cur.Config.Suite, cur.Config.MaxTokens = "en-assistant", 128
	cur.Target.URL = "http://127.0.0.1:9" // the same target as .../v1
	curPath := filepath.Join(dir, "cur.json")
	if err := cur.Write(curPath); err != nil {
		t.Fatal(err)
	}
	out, code := cliRun(t, "compare", curPath, "--against", "last", "--history", hist)
	for _, want := range []string{
		"the last run of this target used suite zh-medical, this one en-assistant",
		"max tokens 256, this one 128",
		"pass --against-any to compare anyway",
	} {
		if code != exitFailure || !strings.Contains(out, want) {
			t.Errorf("--against last across settings: exit %d (want %d), output lacks %q:\n%s", code, exitFailure, want, out)
		}
	}
	if out, code := cliRun(t, "compare", curPath, "--against", "1", "--history", hist); code != exitFailure || !strings.Contains(out, "history run 1 used suite zh-medical") {
		t.Errorf("--against 1 across settings: exit %d, output:\n%s", code, out)
	}
	out, code = cliRun(t, "compare", curPath, "--against", "last", "--against-any", "--history", hist)
	if code != exitRegression || !strings.Contains(out, "history run 1 ") || !strings.Contains(out, "the runs differ in suite: base zh-medical, this one en-assistant") {
		t.Errorf("--against-any: exit %d (want %d), output:\n%s", code, exitRegression, out)
	}
	if _, code := cliRun(t, "compare", curPath, "--against-any", "--history", hist); code != exitUsage {
		t.Errorf("--against-any without --against: exit %d, want %d", code, exitUsage)
	}
}

// TestHistoryShowsNoFigureForRunWithoutSuccess: a run whose requests all
// failed has no TTFT or gap; history shows "-", not 0.0 ms, and a rule
// without data is not counted as failed.
func TestHistoryShowsNoFigureForRunWithoutSuccess(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history.db")
	_, run := seededRun(t, dir, 1, 20, time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	for i := range run.Requests {
		run.Requests[i] = runfile.Request{Index: i, Category: "short", Error: "boom", ErrorKind: "http", Status: 500}
	}
	measure.Summarize(run)
	run.Verdicts = []runfile.Verdict{
		{Rule: "ttft.p95 < 250ms", Scope: "overall", Limit: 250, Unit: "ms", NoData: "no data: all 40 requests of overall failed"},
		{Rule: "errors.rate <= 1%", Scope: "overall", Value: 100, Limit: 1, Unit: "%"},
	}
	if _, err := store.Record(hist, run); err != nil {
		t.Fatal(err)
	}
	out, code := cliRun(t, "history", "--history", hist)
	if code != exitOK {
		t.Fatalf("history: exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "0.0 ms") {
		t.Errorf("history shows 0.0 ms for a run without a successful request:\n%s", out)
	}
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  1 ") {
			row = l
		}
	}
	if f := strings.Fields(row); len(f) < 11 || f[6] != "-" || f[7] != "-" || f[8] != "-" || f[9] != "-" {
		t.Errorf("history row = %q, want - for TTFT p50/p95 and gap p95/max", row)
	}
	if !strings.Contains(row, "FAIL (1 of 2), 1 not judged (no data)") {
		t.Errorf("history row = %q, want FAIL (1 of 2), 1 not judged (no data)", row)
	}
}

// TestBenchAgainstLastRecordsTheComparison runs bench twice against a
// mock: the second run, given the URL with /v1, finds the first, and its
// run.json, junit.xml, report.html and methodology.md hold the
// comparison; a third with other max tokens is refused by name.
func TestBenchAgainstLastRecordsTheComparison(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 5 * time.Millisecond, ITL: time.Millisecond, Tokens: 10, TokensPerEvent: 1})
	hist := filepath.Join(t.TempDir(), "history.db")
	suite := writeBenchSuite(t, "30s")
	bench := func(u, out string, extra ...string) (string, int) {
		args := append([]string{"bench", "--url", u, "--suite", suite, "-n", "6", "--warmup", "0", "--out", out, "--history", hist, "-q"}, extra...)
		return cliRun(t, args...)
	}
	if text, code := bench(url, t.TempDir()); code != exitOK {
		t.Fatalf("first run: exit %d:\n%s", code, text)
	}
	out := t.TempDir()
	text, code := bench(url+"/v1/", out, "--against", "last", "--report", "junit,html,md")
	if code != exitOK && code != exitRegression {
		t.Fatalf("second run: exit %d:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := run.Comparison
	if c == nil || c.Skipped != "" || c.BaseID != 1 || c.Against != "last" || len(c.Changes) == 0 {
		t.Fatalf("run.json comparison = %+v, want one against history run 1", c)
	}
	for file, want := range map[string]string{
		"junit.xml":      `name="tokenpulse.comparison"`,
		"report.html":    `id="comparison"`,
		"methodology.md": "## Comparison with an earlier run",
	} {
		b, err := os.ReadFile(filepath.Join(out, file))
		if err != nil || !strings.Contains(string(b), want) || !strings.Contains(string(b), "history run 1") {
			t.Errorf("%s lacks the comparison (%q): %v", file, want, err)
		}
	}
	if !strings.Contains(text, "comparison with history run 1") {
		t.Errorf("the terminal summary lacks the comparison:\n%s", text)
	}

	out = t.TempDir()
	text, code = bench(url, out, "--against", "last", "--max-tokens", "5")
	if code != exitOK || !strings.Contains(text, "max tokens unset (the prompts' own), this one 5") {
		t.Errorf("other max tokens: exit %d (want 0), output lacks the refusal:\n%s", code, text)
	}
	run, err = runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Comparison == nil || !strings.Contains(run.Comparison.Skipped, "max tokens unset (the prompts' own), this one 5") {
		t.Errorf("run.json comparison = %+v, want the refusal", run.Comparison)
	}
}

// TestCompareAgainstNoiseBand: with fewer earlier comparable runs than
// --noise-runs the verdict says it has no noise estimate yet; with K of
// them each figure is shown with its band, an unchanged profile is not
// flagged and a 20 → 30 ms slowdown is.
func TestCompareAgainstNoiseBand(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history.db")
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	record := func(seed uint64) {
		_, run := seededRun(t, dir, seed, 20, start.Add(time.Duration(seed)*time.Minute))
		if _, err := store.Record(hist, run); err != nil {
			t.Fatal(err)
		}
	}
	for seed := uint64(1); seed <= 2; seed++ {
		record(seed)
	}
	same, _ := seededRun(t, dir, 50, 20, start.Add(time.Hour))
	slow, _ := seededRun(t, dir, 51, 30, start.Add(time.Hour+time.Minute))

	out, code := cliRun(t, "compare", same, "--against", "last", "--history", hist)
	if code != exitOK || !strings.Contains(out, "no noise estimate yet (2 of 5 earlier comparable runs") {
		t.Errorf("2 earlier runs: exit %d, output:\n%s", code, out)
	}
	for seed := uint64(3); seed <= 5; seed++ {
		record(seed)
	}
	out, code = cliRun(t, "compare", same, "--against", "last", "--history", hist)
	if code != exitOK || !strings.Contains(out, "run-to-run noise of 5 earlier comparable runs") || !strings.Contains(out, "within noise") {
		t.Errorf("unchanged, 5 earlier runs: exit %d, output:\n%s", code, out)
	}
	out, code = cliRun(t, "compare", slow, "--against", "last", "--history", hist)
	if code != exitRegression || !strings.Contains(out, "REGRESSION") || !strings.Contains(out, "above the figure's noise band") {
		t.Errorf("20 → 30 ms, 5 earlier runs: exit %d (want %d), output:\n%s", code, exitRegression, out)
	}
	out, code = cliRun(t, "compare", same, "--against", "last", "--history", hist, "--noise-runs", "0")
	if code != exitOK || strings.Contains(out, "noise band") {
		t.Errorf("--noise-runs 0: exit %d, output:\n%s", code, out)
	}
	if out, code := cliRun(t, "compare", same, "--against", "last", "--history", hist, "--noise-runs", "1"); code != exitUsage {
		t.Errorf("--noise-runs 1: exit %d, want %d: %s", code, exitUsage, out)
	}
}
