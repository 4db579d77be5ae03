// Package runner is the one place a run is made and finished: it
// configures a run from a workload, creates its directory and journal,
// sends the workload, summarises the requests (package measure), judges
// them (package gate) and writes run.json. bench, sweep, --repeat, the
// A/B and the rebuild of a killed run's journal all go through it; the
// command line only maps its flags onto a [Spec] and prints.
//
//	rules, _ := gate.Policy{Tier: "mainstream"}.Resolve()
//	res, err := runner.Measure(ctx, runner.Spec{
//		Suite: s, Workload: bench.Workload{Suite: s, Requests: 30, Concurrency: 1, Seed: 1},
//		Client: &stream.Client{BaseURL: url, Model: "m"}, Rules: rules, Dir: "out",
//	})
//	// res.Run.Summary, res.Run.Verdicts; out/run.json
//
// A run is made in steps that can be taken apart: [New] (the record
// before the first request), [CreateJournal], the workload, [Finish]
// (summary, warnings, verdicts) and [Write]. [Measure] takes them all;
// the A/B, which sends two runs' requests interleaved, takes them one by
// one; [Rebuild] finishes a run from its journal.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
	"github.com/tokenpulse/tokenpulse/tokencount"
)

// FileName is the run file's name in its run directory.
const FileName = "run.json"

// Executor carries out a workload and returns its requests: by default
// [bench.RunWorkload] over cfg.Client; a page measurement (bench
// --browser) records its session in run's config.
type Executor func(ctx context.Context, run *runfile.Run, cfg bench.Config, w bench.Workload) (bench.Result, error)

// Spec is one run to measure.
type Spec struct {
	// Suite is what the workload draws from; its categories' thresholds
	// are recorded with the run and judged.
	Suite *suite.Suite
	// Workload is the load: requests, warm-up, cold request, seed,
	// closed or open loop, scenario. Its Suite is set to Suite.
	Workload bench.Workload
	// Client sends the requests.
	Client bench.Doer
	// Target, ColdStart, Device, Tool and CommandLine are recorded as
	// they are.
	Target      runfile.Target
	ColdStart   *runfile.ColdStart
	Device      runfile.Device
	Tool        runfile.Tool
	CommandLine []string
	// MaxTokens overrides every prompt's output limit when > 0; Timeout
	// bounds each request (0: none).
	MaxTokens int
	Timeout   time.Duration
	// Request is the request options sent with every request (recorded).
	Request *api.RequestOptions
	// Tokens, when non-nil, counts each event's tokens.
	Tokens *tokencount.Counter
	// Rules are what the run is judged by besides its suite (nil: the
	// error budget [gate.DefaultErrorBudget] alone).
	Rules *gate.RuleSet
	// Dir is the run directory ("" = a new one under tokenpulse-runs, see
	// [MakeDir]).
	Dir string
	// Progress, when set, is told of each finished request.
	Progress func(bench.Progress)
	// Fatal, when set, may stop the run at a finished request (see
	// bench.Config.Fatal).
	Fatal func(*runfile.Request) error
	// Execute carries out the workload (nil: bench.RunWorkload).
	Execute Executor
	// Around, when set, is called once the run directory exists and
	// before the first request; the function it returns is called when
	// the workload has ended, and what it returns is the run's profile.
	Around func(dir string) func() *runfile.Profile
	// Log, when set, is told of what went wrong with the journal and
	// where the run file was written.
	Log io.Writer
	// Now is the clock of the run's start and end (nil: time.Now).
	Now func() time.Time
	// StartAt, when set, holds the measured requests until this
	// wall-clock instant (bench --start-at: the common start of a sharded
	// run's shards); the run's shard block records how late they began.
	StartAt time.Time
	// Sample, when set, is called just before the first request; the
	// function it returns is called when the workload has ended, and
	// what that returns is the run's scrape of the target's own metrics
	// and the warnings the run carries of it (bench --scrape).
	Sample func() func() (*runfile.Scrape, []string)
	// Trace is recorded as the config's trace (a trace replay).
	Trace *runfile.TraceConfig
}

// Result is a measured run.
type Result struct {
	// Run is the finished run, as written to Dir/run.json.
	Run *runfile.Run
	// Dir is the run directory.
	Dir string
	// Stopped is the error that stopped the workload early (the run is
	// then marked interrupted, and still finished and written).
	Stopped error
}

func (s *Spec) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Spec) rules() *gate.RuleSet {
	if s.Rules != nil {
		return s.Rules
	}
	rs, err := gate.Policy{}.Resolve()
	if err != nil {
		panic("runner: the default rules: " + err.Error())
	}
	return rs
}

func (s *Spec) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, format, args...)
	}
}

// New returns the record of the run s describes before its first
// request: tool, start time, target, device and config (the workload's
// load, the request's shape, the thresholds given, the display model).
// The error is one of the workload's (an open loop it cannot schedule).
func New(s *Spec) (*runfile.Run, error) {
	w := s.Workload
	w.Suite = s.Suite
	run := &runfile.Run{
		SchemaVersion: runfile.SchemaVersion,
		Tool:          s.Tool,
		StartedAt:     s.now(),
		CommandLine:   s.CommandLine,
		Target:        s.Target,
		Device:        s.Device,
		ColdStart:     s.ColdStart,
	}
	tokenizer := ""
	if s.Tokens != nil {
		tokenizer = s.Tokens.Name
	}
	run.Config = runfile.Config{
		Suite:         s.Suite.Name,
		Seed:          w.Seed,
		Requests:      w.Requests,
		Concurrency:   w.Concurrency,
		Arrival:       bench.ArrivalClosed,
		Warmup:        w.Warmup,
		Cold:          w.Cold,
		MaxTokens:     s.MaxTokens,
		TimeoutMS:     s.Timeout.Milliseconds(),
		Scenario:      w.Scenario,
		Thresholds:    s.rules().Thresholds,
		Tokenizer:     tokenizer,
		Request:       s.Request,
		FrameHz:       stats.DefaultDisplay.FrameHz,
		RenderBatchMS: stats.DefaultDisplay.BatchMS(),
	}
	if w.Arrival.Open() {
		schedule, err := w.Schedule()
		if err != nil {
			return nil, err
		}
		a := w.Arrival
		run.Config.Arrival, run.Config.Rate, run.Config.Burstiness = a.Process, a.Rate, a.Burstiness
		run.Config.DurationMS, run.Config.RampMS = a.Duration.Milliseconds(), a.Ramp.Milliseconds()
		run.Config.Requests = len(schedule)
	}
	if w.Replay != nil {
		run.Config.Arrival, run.Config.Requests = runfile.ArrivalTrace, w.Replay.Len()
		run.Config.Trace = s.Trace
	}
	if w.Shard.Sharded() {
		if err := shardOf(run, s, w); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// shardOf records the shard of a sharded workload w in run: config holds
// the whole run's requests, the shard block this shard's part, the
// common start and what judging the merged run needs.
func shardOf(run *runfile.Run, s *Spec, w bench.Workload) error {
	p, err := w.Plan()
	if err != nil {
		return err
	}
	run.Config.Requests = p.Total
	rules := s.rules()
	run.Shard = &runfile.Shard{
		Index: w.Shard.Index, Count: w.Shard.Count, Requests: p.Requests, Concurrency: p.Concurrency,
		TierThresholds: rules.TierTexts(), ExperienceYAML: rules.ExperienceYAML,
	}
	if !s.StartAt.IsZero() {
		at := s.StartAt.UTC()
		run.Shard.StartAt = &at
	}
	return nil
}

// began records in run's shard block the instant its measured requests
// began, and how late that was.
func began(run *runfile.Run, at time.Time) {
	if run.Shard == nil {
		return
	}
	run.Shard.MeasuredAt = at.Round(0).UTC()
	if run.Shard.StartAt != nil {
		run.Shard.StartLateNS = int64(at.Round(0).Sub(*run.Shard.StartAt))
	}
}

// JournalHeader is the journal's first line for run, made before its
// first request: everything run.json says of it so far, with every
// category's thresholds of suite s and what judging needs (the tier's
// thresholds, a non-shipped experience mapping), so that [Rebuild]
// judges a killed run as [Finish] would have.
func JournalHeader(run *runfile.Run, s *suite.Suite, rules *gate.RuleSet) runfile.JournalHeader {
	cfg := run.Config
	cfg.SuiteThresholds = map[string][]string{}
	for _, c := range s.Categories {
		if len(c.Thresholds) > 0 {
			cfg.SuiteThresholds[c.Name] = append([]string(nil), c.Thresholds...)
		}
	}
	cfg.ShowThinking = s.ThinkingShown()
	return runfile.JournalHeader{
		SchemaVersion: run.SchemaVersion, Tool: run.Tool, StartedAt: run.StartedAt, CommandLine: run.CommandLine,
		Target: run.Target, Device: run.Device, Config: cfg, ColdStart: run.ColdStart,
		TierThresholds: rules.TierTexts(), ExperienceYAML: rules.ExperienceYAML,
		Shard: run.Shard,
	}
}

// CreateJournal creates the journal of run in dir (see [JournalHeader]).
func CreateJournal(dir string, run *runfile.Run, s *suite.Suite, rules *gate.RuleSet) (*runfile.JournalWriter, error) {
	return runfile.CreateJournal(filepath.Join(dir, runfile.JournalFile), JournalHeader(run, s, rules))
}

// Measure carries out the run s describes: it creates the run directory
// and its journal before the first request (a run killed before it
// writes run.json leaves what it measured there, see [Rebuild]), sends
// the workload, finishes the run ([Finish]) and writes run.json
// ([Write]). A workload stopped early (cancelled, or Fatal) is marked
// interrupted and still written; Result.Stopped says why. The error is
// one of the workload's configuration, or of writing.
func Measure(ctx context.Context, s Spec) (*Result, error) {
	rules := s.rules()
	w := s.Workload
	w.Suite = s.Suite
	run, err := New(&s)
	if err != nil {
		return nil, err
	}
	dir, err := MakeDir(s.Dir, run.StartedAt)
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	journal, err := CreateJournal(dir, run, s.Suite, rules)
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	defer journal.Close()

	var stop func() *runfile.Profile
	if s.Around != nil {
		stop = s.Around(dir)
	}
	execute := s.Execute
	if execute == nil {
		execute = func(ctx context.Context, _ *runfile.Run, cfg bench.Config, w bench.Workload) (bench.Result, error) {
			return bench.RunWorkload(ctx, cfg, w)
		}
	}
	var stopSample func() (*runfile.Scrape, []string)
	if s.Sample != nil {
		stopSample = s.Sample()
	}
	// No collector pauses while tokens are stamped (stream.HoldGC).
	restoreGC := stream.HoldGC()
	stopWatch := watchMachine(sleepFor)
	res, stopped := execute(ctx, run, bench.Config{
		Client:    s.Client,
		MaxTokens: s.MaxTokens,
		Timeout:   s.Timeout,
		Progress:  s.Progress,
		Fatal:     s.Fatal,
		Tokens:    s.Tokens,
		Journal:   journal,
		StartAt:   s.StartAt,
		Began:     func(at time.Time) { began(run, at) },
	}, w)
	run.Machine = stopWatch()
	restoreGC()
	var scrapeNotes []string
	if stopSample != nil {
		run.Scrape, scrapeNotes = stopSample()
	}
	if stop != nil {
		run.Profile = stop()
	}
	// What the workload learned of the run (a browser run's page and the
	// relay's holds) and the profile, now written, for a rebuild should
	// the process die before run.json is written.
	journal.Update(runfile.JournalUpdate{Browser: run.Config.Browser, Profile: run.Profile})
	run.Requests, run.Scenario = res.Requests, res.Scenario
	run.FinishedAt = s.now()
	run.Interrupted = stopped != nil
	if stopped != nil && !errors.Is(stopped, context.Canceled) {
		run.StopReason = stopped.Error() // a Fatal rule's reason, not a Ctrl-C
	}
	var notes []string
	if s.Execute == nil {
		notes = rapidFireNotes(s.Suite, w)
	}
	finish(run, s.Suite, rules, unmeasuredInRun, append(notes, scrapeNotes...))

	if err := journal.Close(); err != nil && journal.Err() == nil {
		s.logf("tokenpulse: warning: closing the journal: %v\n", err)
	}
	if err := journal.Err(); err != nil {
		s.logf("tokenpulse: warning: the journal stopped (%v); the run file holds every request\n", err)
	}
	if err := Write(run, dir); err != nil {
		return nil, fmt.Errorf("%w; the finished requests are in %s (tokenpulse report %s rebuilds the run from it)", err, journal.Path(), dir)
	}
	s.logf("tokenpulse: run file written to %s\n", filepath.Join(dir, FileName))
	// run.json, written atomically, now holds everything the journal did.
	if err := os.Remove(journal.Path()); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.logf("tokenpulse: warning: removing the journal: %v\n", err)
	}
	return &Result{Run: run, Dir: dir, Stopped: stopped}, nil
}

// rapidFireNotes warns that rapid-fire asks a conversation's first turn
// only (the stream workload's rule, see bench.RapidFirePrompts).
func rapidFireNotes(s *suite.Suite, w bench.Workload) []string {
	if w.Scenario != bench.ScenarioRapidFire {
		return nil
	}
	convs := 0
	for _, q := range bench.RapidFirePrompts(s, max(w.Requests/3, 1), w.Seed) {
		if q.Conversation() {
			convs++
		}
	}
	if convs == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d conversation prompts were asked in rapid-fire as their first turn only (the scenario interrupts single questions)", convs)}
}

// Write writes run as dir/run.json (atomically), creating dir.
func Write(run *runfile.Run, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing the run file: %w", err)
	}
	if err := run.Write(filepath.Join(dir, FileName)); err != nil {
		return fmt.Errorf("writing the run file: %w", err)
	}
	return nil
}

// MakeDir creates a run's directory: out when given (it may exist), else
// tokenpulse-runs/YYYYMMDD-HHMMSS of started, or -2, -3, ... when that
// exists, so that runs started in the same second, in this process or
// another, never share one (os.Mkdir fails for all but one of them).
func MakeDir(out string, started time.Time) (string, error) {
	if out != "" {
		return out, os.MkdirAll(out, 0o755)
	}
	base := filepath.Join("tokenpulse-runs", started.Format("20060102-150405"))
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", err
	}
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// ColdByDefault says whether a run measures its first request as the
// target's cold start: as asked (bench --cold) when asked is non-nil,
// else exactly when the run started the target itself (the embedded
// server, whose first request is then its first ever).
func ColdByDefault(started bool, asked *bool) bool {
	if asked != nil {
		return *asked
	}
	return started
}

// Later returns s as the run after the first of a series against one
// target (a sweep's steps, repeats): the target's first request and its
// cold start belong to the first run, so a later one measures no cold
// request and records no cold start.
func (s Spec) Later() Spec {
	s.Workload.Cold = false
	s.ColdStart = nil
	return s
}
