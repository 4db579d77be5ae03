package repeats_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/repeats"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// TestMeasureThroughTheLibrary: K runs measured with the library alone,
// each in rep-NN, the cold request and the cold start in the first only,
// summarised in repeats.json.
func TestMeasureThroughTheLibrary(t *testing.T) {
	url, stop, err := mock.Serve(mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s, err := suite.Parse("one", []byte("name: one\nlanguage: en\ncategories:\n  - name: short\n    weight: 1\n    max_tokens: 4\n    prompts:\n      - id: hi\n        text: Say hi.\n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	each := 0
	res, err := repeats.Measure(context.Background(), 3, repeats.Config{
		Spec: runner.Spec{
			Suite: s, Workload: bench.Workload{Requests: 2, Concurrency: 1, Cold: true, Seed: 1},
			Client: &stream.Client{BaseURL: url, Model: mock.ModelName}, ColdStart: &runfile.ColdStart{TotalMS: 5},
		},
		Dir: dir, Each: func(int, *runner.Spec) { each++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 || each != 3 || res.AllFailed || res.Stopped != nil {
		t.Fatalf("%d runs, %d calls of Each, all failed %v, stopped %v", len(res.Runs), each, res.AllFailed, res.Stopped)
	}
	for i, name := range []string{"rep-01", "rep-02", "rep-03"} {
		run, err := runfile.Load(filepath.Join(dir, name, runner.FileName))
		if err != nil {
			t.Fatal(err)
		}
		if first := i == 0; run.Config.Cold != first || (run.ColdStart != nil) != first {
			t.Errorf("%s: cold %v, cold start %v; want both only in the first", name, run.Config.Cold, run.ColdStart)
		}
	}
	set, err := repeats.Load(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Runs) != 3 {
		t.Errorf("repeats.json names %v", set.Runs)
	}
}
