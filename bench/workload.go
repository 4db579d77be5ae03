package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/suite"
)

// ScenarioRapidFire is the name of the rapid-fire scenario (see
// [RapidFire]) in [Workload.Scenario] and in the run file.
const ScenarioRapidFire = "rapid-fire"

// Workload is a run drawn from a golden suite, as `tokenpulse bench`
// draws it: the cold prompt, the warm-up prompts and the measured sample
// all come from Suite with seeds derived from Seed, so the same workload
// asks the same prompts in the same order.
//
//	res, err := bench.RunWorkload(ctx, bench.Config{Client: c, Timeout: time.Minute},
//		bench.Workload{Suite: s, Requests: 30, Warmup: 2, Cold: true, Seed: 1, Concurrency: 1})
type Workload struct {
	Suite *suite.Suite
	// Requests is the number of measured requests (at least 1); in the
	// rapid-fire scenario there are max(Requests/3, 1) pairs, each asking
	// three requests.
	Requests int
	// Warmup requests are sent first, recorded and never counted.
	Warmup int
	// Cold sends one request before the warm-up and records it as the
	// target's cold start.
	Cold bool
	// Seed seeds the samples.
	Seed uint64
	// Concurrency of the closed loop (at least 1; rapid-fire asks one
	// pair at a time).
	Concurrency int
	// Scenario is "" (the suite sample in a closed loop) or
	// [ScenarioRapidFire].
	Scenario string
	// Arrival, when open ([Arrival.Open]), sends the suite sample in an
	// open loop on its schedule, drawn with Seed; Concurrency is then the
	// ceiling on requests in flight. Without a Duration it schedules
	// Requests arrivals (Arrival.Max is set from Requests); with one, the
	// sample holds as many prompts as the schedule arrivals.
	Arrival Arrival
	// Shard, when it splits the workload (Count > 1), makes this the
	// shard's part of it (see [Shard]): Requests, Concurrency and
	// Arrival.Rate stay the whole run's.
	Shard Shard
	// Replay, when non-nil, sends a trace's arrivals in an open loop
	// instead of the suite sample (the suite still gives the cold and
	// warm-up prompts); Concurrency is then the ceiling on requests in
	// flight, and Requests is unused. A shard sends its part of them
	// (see [Shard]).
	Replay Replay
}

// Schedule returns the open loop's arrivals (nil for a closed loop): a
// shard's own (see [Shard]).
func (w Workload) Schedule() ([]time.Duration, error) {
	if w.Shard.Sharded() {
		p, err := w.Plan()
		return p.Schedule, err
	}
	a := w.Arrival
	if a.Duration == 0 && a.Max == 0 {
		a.Max = w.Requests
	}
	return a.Schedule(w.Seed)
}

// total is the number of requests w makes in a closed loop: the
// measured ones, the warm-up ones and the cold one.
func (w Workload) total() int {
	n := w.Requests + w.Warmup
	if w.Cold {
		n++
	}
	return n
}

// Validate reports what makes w unrunnable.
func (w Workload) Validate() error {
	switch {
	case w.Suite == nil:
		return errors.New("no suite")
	case w.Requests < 1:
		return fmt.Errorf("requests must be ≥ 1, not %d: a run without a measured request measures nothing", w.Requests)
	case w.total() > runfile.MaxRequests:
		return fmt.Errorf("%d requests with the cold and warm-up ones: a run file holds at most %d", w.total(), runfile.MaxRequests)
	case w.Concurrency < 1:
		return fmt.Errorf("concurrency must be ≥ 1, not %d", w.Concurrency)
	case w.Warmup < 0:
		return fmt.Errorf("warm-up requests must be ≥ 0, not %d", w.Warmup)
	case w.Scenario != "" && w.Scenario != ScenarioRapidFire:
		return fmt.Errorf("unknown scenario %q (want %q or none)", w.Scenario, ScenarioRapidFire)
	case w.Scenario != "" && w.Arrival.Open():
		return fmt.Errorf("the %s scenario paces itself: it takes no arrival rate", w.Scenario)
	case w.Replay != nil && (w.Scenario != "" || w.Arrival.Open()):
		return errors.New("a trace replay keeps the trace's own times: it takes no scenario and no arrival rate")
	case w.Replay != nil && w.Replay.Len() < max(w.Shard.Count, 1):
		return fmt.Errorf("the trace holds %d requests: too few for %d shards", w.Replay.Len(), w.Shard.Count)
	}
	if err := w.validateShard(); err != nil {
		return err
	}
	return w.Arrival.Validate()
}

// Config returns base with the workload's cold prompt, warm-up prompts,
// measured sample and concurrency filled in: the config [Run] carries out
// for the suite-sample scenario. For rapid-fire, leave Prompts out (the
// cold and warm-up requests come first in every scenario, so that no
// measured request is the target's cold start) and see [RapidFirePrompts].
func (w Workload) Config(base Config) Config {
	cfg := base
	cfg.WarmupPrompts = w.Suite.Sample(w.Warmup, w.Seed+1)
	cfg.ColdPrompt = nil
	if w.Cold {
		if p := w.Suite.Sample(1, w.Seed+2); len(p) > 0 {
			cfg.ColdPrompt = &p[0]
		}
	}
	cfg.Prompts = w.Suite.Sample(w.Requests, w.Seed)
	cfg.Schedule = nil
	if w.Arrival.Open() {
		// Validate has vetted the arrival; a schedule it cannot draw is empty.
		cfg.Schedule, _ = w.Schedule()
		if cfg.Schedule == nil {
			cfg.Schedule = []time.Duration{}
		}
		cfg.Prompts = w.Suite.Sample(len(cfg.Schedule), w.Seed)
	}
	cfg.Concurrency = w.Concurrency
	cfg.Replay = nil
	if w.Replay != nil {
		cfg.Prompts, cfg.Schedule, cfg.Replay = nil, nil, w.Replay
		if w.Shard.Sharded() {
			cfg.Replay = shardReplay{all: w.Replay, s: w.Shard}
			cfg.Concurrency = w.Shard.Part(w.Concurrency)
			if w.Shard.Index > 0 {
				cfg.ColdPrompt = nil // the target's cold start is shard 0's
			}
		}
		return cfg
	}
	if w.Shard.Sharded() {
		// Validate has vetted the shard and the arrival.
		p, _ := w.Plan()
		cfg.Prompts, cfg.Schedule, cfg.Concurrency = p.Prompts, p.Schedule, p.Concurrency
		if w.Shard.Index > 0 {
			cfg.ColdPrompt = nil // the target's cold start is shard 0's
		}
	}
	return cfg
}

// Result is what [RunWorkload] measured.
type Result struct {
	// Requests in the order they were issued, indexed from 0.
	Requests []runfile.Request
	// Scenario describes the scenario's own results (rapid-fire's
	// follow-ups); nil for the suite sample, and when the run stopped
	// before the scenario began.
	Scenario *runfile.Scenario
}

// RunWorkload carries out w with cfg's client and limits (cfg's prompts
// are replaced by the workload's). Like [Run], it returns what was
// measured together with the error that stopped the run. The rapid-fire
// scenario aborts through cfg.Aborter, or through cfg.Client when that is
// an [Aborter].
func RunWorkload(ctx context.Context, cfg Config, w Workload) (Result, error) {
	if err := w.Validate(); err != nil {
		return Result{}, err
	}
	cfg = w.Config(cfg)
	if w.Scenario == "" {
		reqs, err := Run(ctx, cfg)
		return Result{Requests: reqs}, err
	}

	aborter := cfg.Aborter
	if aborter == nil {
		aborter, _ = cfg.Client.(Aborter)
	}
	if aborter == nil {
		return Result{}, errors.New("the rapid-fire scenario needs an Aborter")
	}
	cfg.Prompts = nil
	reqs, err := Run(ctx, cfg)
	if err != nil {
		return Result{Requests: reqs}, err
	}
	more, fus, err := RapidFire(ctx, RapidFireConfig{
		Client:    cfg.Client,
		Aborter:   aborter,
		Prompts:   RapidFirePrompts(w.Suite, max(w.Requests/3, 1), w.Seed),
		MaxTokens: cfg.MaxTokens,
		Timeout:   cfg.Timeout,
		Progress:  journaled(cfg.Journal, cfg.Progress),
		Tokens:    cfg.Tokens,
	})
	offset := len(reqs) // RapidFire indexes its requests from 0
	for i := range more {
		more[i].Index += offset
	}
	for i := range fus {
		fus[i].Interrupted += offset
		fus[i].FollowUp += offset
	}
	return Result{
		Requests: append(reqs, more...),
		Scenario: &runfile.Scenario{Name: ScenarioRapidFire, FollowUps: fus},
	}, err
}

// RapidFirePrompts returns pairs (interrupted, follow-up) for the
// rapid-fire scenario. The follow-ups, which are the measured answers, are
// a stratified sample of their own, so every category is judged on them
// (given at least as many pairs as categories); the interrupted questions
// are drawn with another seed.
func RapidFirePrompts(s *suite.Suite, pairs int, seed uint64) []suite.Prompt {
	follow := s.Sample(pairs, seed)
	first := s.Sample(pairs, seed+3)
	out := make([]suite.Prompt, 0, 2*len(follow))
	for i := range follow {
		out = append(out, first[i], follow[i])
	}
	return out
}
