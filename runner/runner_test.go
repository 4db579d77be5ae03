package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// exampleSuite is a suite of two categories, one with a threshold.
func exampleSuite() *suite.Suite {
	s, err := suite.Parse("example", []byte(`
name: example
language: en
categories:
  - name: short
    weight: 1
    max_tokens: 8
    thresholds: ["ttft.p95 < 5s"]
    prompts:
      - id: capital
        text: What is the capital of France?
      - id: boil
        text: At what temperature does water boil?
  - name: long
    weight: 1
    max_tokens: 8
    prompts:
      - id: essay
        text: Write about the sea.
`))
	if err != nil {
		panic(err)
	}
	return s
}

// TestMeasureJudgesThroughTheLibrary builds, measures, judges and writes
// a run with package runner alone, as a Go user embedding tokenpulse
// would: the suite's, the given and the tier's thresholds and the error
// budget are judged, the goodput is computed, run.json is written and the
// journal is gone.
func TestMeasureJudgesThroughTheLibrary(t *testing.T) {
	url, stop := startMock()
	defer stop()
	s := exampleSuite()
	rules, err := gate.Policy{Thresholds: []string{"gap.max < 0ms"}, Tier: "entry", Suite: s.Name, Categories: []string{"short", "long"}}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	res, err := runner.Measure(context.Background(), runner.Spec{
		Suite:    s,
		Workload: bench.Workload{Requests: 6, Concurrency: 2, Seed: 1, Cold: true},
		Client:   &stream.Client{BaseURL: url, API: "chat", Model: mock.ModelName},
		Target:   runfile.Target{URL: url, API: "chat", Model: mock.ModelName, Backend: "mock"},
		Rules:    rules,
		Dir:      dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != nil || res.Dir != dir {
		t.Fatalf("stopped %v, dir %s", res.Stopped, res.Dir)
	}
	run, err := runfile.Load(filepath.Join(dir, runner.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, runfile.JournalFile)); !os.IsNotExist(err) {
		t.Errorf("the journal is still there (%v)", err)
	}
	if run.Summary.Overall.Requests != 6 || run.Summary.Cold == nil || run.Summary.Goodput == nil {
		t.Errorf("summary: %d warm requests, cold %v, goodput %v; want 6, a cold group and a goodput", run.Summary.Overall.Requests, run.Summary.Cold, run.Summary.Goodput)
	}
	var got []string
	for _, v := range run.Verdicts {
		got = append(got, v.Scope+" "+v.Rule+" "+v.Source)
	}
	want := []string{
		"category:short ttft.p95 < 5s suite",
		"overall gap.max < 0ms flag",
		"overall errors.rate <= 1% flag",
		"overall ttft.p95 <= 420ms tier:entry",
		"overall gap.p95 <= 130ms tier:entry",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdicts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if failed := gate.Failed(run.Verdicts); len(failed) != 1 || failed[0].Rule != "gap.max < 0ms" {
		t.Errorf("failed verdicts %+v, want gap.max < 0ms only", failed)
	}
	if run.Config.Thresholds[len(run.Config.Thresholds)-1] != "[overall] errors.rate <= 1%" {
		t.Errorf("config.thresholds %q: want the error budget last", run.Config.Thresholds)
	}
}

// TestFinishJudgesAStepwiseRun: a run made step by step (New, the
// workload, Finish), as the A/B makes its two, is judged like Measure's:
// it has verdicts, goodput and the error budget.
func TestFinishJudgesAStepwiseRun(t *testing.T) {
	url, stop := startMock()
	defer stop()
	s := exampleSuite()
	w := bench.Workload{Suite: s, Requests: 4, Concurrency: 1, Seed: 2}
	spec := &runner.Spec{Suite: s, Workload: w}
	run, err := runner.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bench.RunWorkload(context.Background(), bench.Config{Client: &stream.Client{BaseURL: url, Model: mock.ModelName}}, w)
	if err != nil {
		t.Fatal(err)
	}
	run.Requests = res.Requests
	runner.Finish(run, s, nil)
	if len(run.Verdicts) == 0 || run.Summary.Goodput == nil {
		t.Fatalf("verdicts %+v, goodput %v: the run was not judged", run.Verdicts, run.Summary.Goodput)
	}
	last := run.Verdicts[len(run.Verdicts)-1]
	if last.Rule != "errors.rate <= 1%" || !last.Passed {
		t.Errorf("last verdict %+v, want the default error budget, passed", last)
	}
}

// TestRebuildKeepsBrowserAndProfile: config.browser and the profile
// become known after the journal's header (Chromium starts, the profile
// is written at the workload's end); a run that dies before run.json is
// written (here: run.json cannot be written) is rebuilt from its journal
// with both.
func TestRebuildKeepsBrowserAndProfile(t *testing.T) {
	url, stop := startMock()
	defer stop()
	s := exampleSuite()
	dir := filepath.Join(t.TempDir(), "run")
	// A directory where run.json goes: writing the run file fails, and
	// the journal stays, as when the process is killed at that point.
	if err := os.MkdirAll(filepath.Join(dir, runner.FileName, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	browser := &runfile.Browser{Page: "http://page", Renders: []string{"page"}, CPUThrottle: 4}
	_, err := runner.Measure(context.Background(), runner.Spec{
		Suite:    s,
		Workload: bench.Workload{Requests: 3, Concurrency: 1, Seed: 1},
		Client:   &stream.Client{BaseURL: url, API: "chat", Model: mock.ModelName},
		Target:   runfile.Target{URL: url, API: "chat", Model: mock.ModelName, Backend: "mock"},
		Dir:      dir,
		Execute: func(ctx context.Context, run *runfile.Run, cfg bench.Config, w bench.Workload) (bench.Result, error) {
			res, err := bench.RunWorkload(ctx, cfg, w)
			run.Config.Browser = browser
			return res, err
		},
		Around: func(string) func() *runfile.Profile {
			return func() *runfile.Profile {
				return &runfile.Profile{File: "cpu.pprof", Source: "embedded", DurationMS: 12}
			}
		},
	})
	if err == nil {
		t.Fatal("Measure wrote run.json over a directory")
	}
	j, err := runfile.ReadJournal(filepath.Join(dir, runfile.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	run, err := runner.Rebuild(j)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Requests) != 3 {
		t.Errorf("%d requests rebuilt, want 3", len(run.Requests))
	}
	if br := run.Config.Browser; br == nil || br.Page != browser.Page || br.CPUThrottle != 4 {
		t.Errorf("rebuilt config.browser %+v, want %+v", br, browser)
	}
	if p := run.Profile; p == nil || p.File != "cpu.pprof" || p.DurationMS != 12 {
		t.Errorf("rebuilt profile %+v, want cpu.pprof of 12 ms", p)
	}
}

// TestColdByDefault: the one cold-by-default rule bench, sweep, --repeat
// and the A/B follow: --cold when given, else a target the run started.
func TestColdByDefault(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		started bool
		asked   *bool
		want    bool
	}{{true, nil, true}, {false, nil, false}, {true, &no, false}, {false, &yes, true}} {
		if got := runner.ColdByDefault(tc.started, tc.asked); got != tc.want {
			t.Errorf("ColdByDefault(%v, %v) = %v, want %v", tc.started, tc.asked, got, tc.want)
		}
	}
}
