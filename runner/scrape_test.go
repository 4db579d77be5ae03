package runner_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/stream"
)

// TestMeasureKeepsTheScrape: Spec.Sample is started before the first
// request and stopped after the last; what it returns is in run.json,
// the scrape and its warnings (a failed scrape warns, the run stands).
func TestMeasureKeepsTheScrape(t *testing.T) {
	url, stop := startMock()
	defer stop()
	dir := filepath.Join(t.TempDir(), "run")
	var startedAt, stoppedAt time.Time
	res, err := runner.Measure(context.Background(), runner.Spec{
		Suite:    exampleSuite(),
		Workload: bench.Workload{Requests: 3, Concurrency: 1, Seed: 1},
		Client:   &stream.Client{BaseURL: url, API: "chat", Model: mock.ModelName},
		Target:   runfile.Target{URL: url, API: "chat", Model: mock.ModelName, Backend: "mock"},
		Dir:      dir,
		Sample: func() func() (*runfile.Scrape, []string) {
			startedAt = time.Now()
			return func() (*runfile.Scrape, []string) {
				stoppedAt = time.Now()
				return &runfile.Scrape{URL: url + "/metrics", StartedAt: startedAt.UTC(), IntervalMS: 1000, Samples: 2, Failed: 1,
					Series: []runfile.ScrapeSeries{{Name: "llamacpp:requests_deferred", Role: runfile.RoleQueue, Kind: runfile.KindGauge, Points: []runfile.ScrapePoint{{MS: 0, V: 2}}}}}, []string{"--scrape: 1 of 2 samples failed"}
			}
		},
	})
	if err != nil || res.Stopped != nil {
		t.Fatal(err, res.Stopped)
	}
	run, err := runfile.Load(filepath.Join(dir, runner.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if sc := run.Scrape; sc == nil || len(sc.Series) != 1 || sc.Series[0].Points[0].V != 2 || sc.Failed != 1 {
		t.Fatalf("run.json scrape %+v", run.Scrape)
	}
	if !slices.Contains(run.Warnings, "--scrape: 1 of 2 samples failed") {
		t.Errorf("warnings %q lack the scrape's", run.Warnings)
	}
	for _, q := range run.Requests {
		if q.StartedAt.Before(startedAt) || q.StartedAt.After(stoppedAt) {
			t.Errorf("request %d started at %v, outside the sampling %v–%v", q.Index, q.StartedAt, startedAt, stoppedAt)
		}
	}
}
