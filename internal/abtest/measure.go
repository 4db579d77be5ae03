package abtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/stream"
)

// The A/B's files in its directory, beside a/run.json and b/run.json.
const (
	FileName     = "ab.json"
	TextFileName = "ab.txt"
)

// Arm is one side of an A/B: what serves it and how it is recorded.
type Arm struct {
	// Label is "A" or "B"; the side's run goes to the subdirectory of its
	// lower case.
	Label string
	// Path is the model file served (recorded in the summary).
	Path string
	// Client sends the side's requests.
	Client bench.Doer
	// Target and ColdStart are recorded in the side's run.
	Target    runfile.Target
	ColdStart *runfile.ColdStart
}

// Config is an A/B to measure.
type Config struct {
	// Spec is what both sides' runs share: suite, workload (one request
	// at a time), device, tool, command line, limits, request options,
	// rules and the clock of their start. Its Client, Target and
	// ColdStart are each arm's.
	Spec runner.Spec
	// Dir is the A/B directory; it must exist.
	Dir string
	// Formats are the reports written beside each side's run.json.
	Formats []string
	// Fatal, when set, may stop the A/B at a finished request.
	Fatal func(*runfile.Request) error
	// Progress, when set, is told of each request.
	Progress func(Step)
	// Now is the clock of the runs' end (nil: time.Now); Spec.Now is
	// their start's.
	Now func() time.Time
}

// Result is a measured A/B.
type Result struct {
	// Summary is ab.json's content.
	Summary Summary
	// Runs are A's and B's runs, as written.
	Runs [2]*runfile.Run
	// Stopped is the error that stopped the A/B early (both runs are then
	// marked interrupted, finished and written).
	Stopped error
}

// Measure measures a against b (see the package): it makes each side's
// run as runner.New does, sends the workload interleaved ([Run]),
// finishes and judges each run (runner.Finish) and writes it to
// Dir/a and Dir/b with the reports asked, then the summary to
// Dir/ab.json and Dir/ab.txt. The error is one of configuration or of
// writing.
func Measure(ctx context.Context, cfg Config, a, b Arm) (*Result, error) {
	arms := [2]Arm{a, b}
	var recs [2]*Recorder
	var runs [2]*runfile.Run
	var confs [2]bench.Config
	for i, arm := range arms {
		recs[i] = &Recorder{Doer: arm.Client}
		s := cfg.Spec
		s.Target, s.ColdStart = arm.Target, arm.ColdStart
		run, err := runner.New(&s)
		if err != nil {
			return nil, err
		}
		runs[i] = run
		confs[i] = bench.Config{Client: recs[i], MaxTokens: s.MaxTokens, Timeout: s.Timeout, Fatal: cfg.Fatal}
	}
	w := cfg.Spec.Workload
	w.Suite = cfg.Spec.Suite
	restoreGC := stream.HoldGC()
	ra, rb, stopped := Run(ctx, confs[0], confs[1], w, cfg.Progress)
	restoreGC()
	finished := time.Now().UTC()
	if cfg.Now != nil {
		finished = cfg.Now().UTC()
	}
	runs[0].Requests, runs[1].Requests = ra, rb
	var sides [2]Side
	for i, arm := range arms {
		run := runs[i]
		run.FinishedAt = finished
		run.Interrupted = stopped != nil
		runner.Finish(run, cfg.Spec.Suite, cfg.Spec.Rules)
		sub := filepath.Join(cfg.Dir, strings.ToLower(arm.Label))
		if err := runner.Write(run, sub); err != nil {
			return nil, fmt.Errorf("%s: %w", arm.Label, err)
		}
		if len(cfg.Formats) > 0 {
			if err := report.WriteAll(sub, run, report.Options{Formats: cfg.Formats}); err != nil {
				return nil, fmt.Errorf("%s's reports: %w", arm.Label, err)
			}
		}
		sides[i] = NewSide(arm.Label, arm.Path, filepath.Join(sub, runner.FileName), run)
	}
	agree := Agree(runs[0], runs[1], recs[0].Output, recs[1].Output)
	sum := Summarize(sides[0], sides[1], runs[0], runs[1], agree)
	if err := sum.Write(filepath.Join(cfg.Dir, FileName)); err != nil {
		return nil, fmt.Errorf("writing the A/B summary: %w", err)
	}
	txt, err := os.Create(filepath.Join(cfg.Dir, TextFileName))
	if err != nil {
		return nil, err
	}
	if err := sum.WriteText(txt); err != nil {
		txt.Close()
		return nil, err
	}
	if err := txt.Close(); err != nil {
		return nil, err
	}
	return &Result{Summary: sum, Runs: runs, Stopped: stopped}, nil
}
