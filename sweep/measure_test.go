package sweep_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
	"github.com/tokenpulse/tokenpulse/sweep"
)

func oneCategory(t *testing.T) *suite.Suite {
	t.Helper()
	s, err := suite.Parse("one", []byte(`
name: one
language: en
categories:
  - name: short
    weight: 1
    max_tokens: 4
    prompts:
      - id: hi
        text: Say hi.
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMeasureStepsThroughTheLibrary: a sweep measured with the library
// alone names its steps' directories, measures the cold request and
// records the cold start in the first step only, records every step and
// writes its files.
func TestMeasureStepsThroughTheLibrary(t *testing.T) {
	url, stop, err := mock.Serve(mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s := oneCategory(t)
	dir := t.TempDir()
	spec := runner.Spec{
		Suite: s, Workload: bench.Workload{Requests: 3, Concurrency: 1, Cold: true, Seed: 1},
		Client: &stream.Client{BaseURL: url, Model: mock.ModelName}, ColdStart: &runfile.ColdStart{TotalMS: 5},
	}
	recorded := 0
	sw := &sweep.Sweep{SchemaVersion: sweep.SchemaVersion, Kind: sweep.KindConcurrency, Suite: s.Name}
	res, err := sweep.Measure(context.Background(), sweep.Plan{Kind: sweep.KindConcurrency, Loads: []float64{1, 2}, Knee: sweep.DefaultKneeRule()}, sw,
		sweep.Config{Spec: spec, Dir: dir, Record: func(*runfile.Run) error { recorded++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.AllFailed || res.Stopped != nil || recorded != 2 || len(sw.Steps) != 2 {
		t.Fatalf("all failed %v, stopped %v, recorded %d, steps %d", res.AllFailed, res.Stopped, recorded, len(sw.Steps))
	}
	for i, want := range []struct {
		dir         string
		concurrency int
		cold        bool
	}{{"01-concurrency-1", 1, true}, {"02-concurrency-2", 2, false}} {
		if sw.Steps[i].Dir != want.dir {
			t.Errorf("step %d in %q, want %q", i, sw.Steps[i].Dir, want.dir)
		}
		run, err := runfile.Load(filepath.Join(dir, want.dir, runner.FileName))
		if err != nil {
			t.Fatal(err)
		}
		if run.Config.Concurrency != want.concurrency || run.Config.Cold != want.cold || (run.ColdStart != nil) != want.cold {
			t.Errorf("step %d: concurrency %d, cold %v, cold start %v; want %d, %v, %v", i, run.Config.Concurrency, run.Config.Cold, run.ColdStart, want.concurrency, want.cold, want.cold)
		}
	}
	for _, f := range []string{sweep.FileName, sweep.HTMLFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestScheduleWarningsFollowTheRunsRule: a step is behind by the rule
// each run's own warning follows (runner.Behind: lag p99 above
// min(10 ms, 1/rate)).
func TestScheduleWarningsFollowTheRunsRule(t *testing.T) {
	sw := &sweep.Sweep{Kind: sweep.KindRate, Steps: []sweep.Step{
		{Load: 10, LagP99Ms: 9},  // under 10 ms
		{Load: 200, LagP99Ms: 6}, // above 1/200 s = 5 ms
		{Load: 50, SlotWaits: 3}, // waited for -c
	}}
	w := sw.ScheduleWarnings()
	if len(w) != 2 || !strings.Contains(w[0], "at 200 (lag p99 6.0 ms)") || strings.Contains(w[0], "10 (") || !strings.Contains(w[1], "50 (3 requests)") {
		t.Errorf("warnings %q", w)
	}
}
