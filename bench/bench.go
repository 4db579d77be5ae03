// Package bench runs workloads against a streaming endpoint and collects
// one runfile.Request per request: the cold request first (when asked),
// then the warm-up requests (recorded, never counted), then the measured
// requests of a golden suite's stratified sample in a closed loop of a
// given concurrency, or in an open loop on a schedule of arrivals
// ([Config.Schedule], drawn by [Arrival.Schedule]).
//
//	reqs, err := bench.Run(ctx, bench.Config{Client: c, Prompts: s.Sample(20, 1), Concurrency: 4})
//
// [RunWorkload] draws the whole workload of `tokenpulse bench` from a
// suite (cold prompt, warm-up, sample, scenario) and runs it.
//
// Cancelling ctx stops the run: requests in flight are cut short and, like
// requests not yet sent, not recorded (they measured nothing about the
// target), and Run returns what was measured together with ctx's error, so
// the caller can still write it.
//
// Run is safe to call from several goroutines with different configs.
package bench

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/clock"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
	"github.com/tokenpulse/tokenpulse/tokencount"
)

// Doer sends one streamed request and returns its trace; *stream.Client is
// one. Tests substitute a scripted one.
type Doer interface {
	Do(ctx context.Context, req stream.Request) *stream.Trace
}

// Config describes a workload.
type Config struct {
	// Client sends the requests.
	Client Doer
	// Aborter stops the requests a scenario interrupts (rapid-fire, in
	// [RunWorkload]); nil: Client, when it is an [Aborter].
	Aborter Aborter
	// Prompts are the measured requests, in order (a suite sample); a
	// conversation is one prompt whose turns are sent one after another
	// (see [TurnRequest]), each recorded as a request.
	Prompts []suite.Prompt
	// WarmupPrompts are sent before the measured ones, one at a time,
	// and recorded with Warmup set.
	WarmupPrompts []suite.Prompt
	// ColdPrompt, when non-nil, is sent first, alone, and recorded as the
	// target's cold request: one request, a conversation's first turn
	// alone.
	ColdPrompt *suite.Prompt
	// Concurrency is the number of requests in flight in the closed loop
	// (at least 1); with a Schedule, the ceiling on requests in flight.
	Concurrency int
	// Schedule, when non-nil, runs the measured requests in an open loop:
	// Prompts[i] is due at Schedule[i] after the loop's start, whatever
	// became of the requests before it (see [Arrival]). A request due
	// while Concurrency requests are in flight waits for one to end; its
	// record's schedule_lag_ns says how late it started.
	Schedule []time.Duration
	// Replay, when non-nil, runs the measured requests in an open loop
	// on its arrivals, read as they come due (Schedule and Prompts are
	// then unused); records carry their lag as with a Schedule, and
	// max_tokens asked.
	Replay Replay
	// Clock keeps the Schedule (nil: [clock.Real]).
	Clock clock.Clock
	// atCeiling, when set (tests), is told of each scheduled request
	// that finds the concurrency ceiling reached, before it waits.
	atCeiling func(i int)
	// MaxTokens overrides the prompts' own output limits when > 0.
	MaxTokens int
	// Timeout bounds each request (0: none).
	Timeout time.Duration
	// Progress, when set, is called after each request completes, from one
	// goroutine at a time.
	Progress func(Progress)
	// Fatal, when set, is asked about each finished request; a non-nil
	// error stops the run (requests in flight are cut short and dropped)
	// and Run returns it. Used to stop at once when the target refuses
	// the credentials, instead of failing every request.
	Fatal func(*runfile.Request) error
	// Tokens, when set, counts the output tokens of each event with a
	// model's vocabulary (bench --tokenizer), for servers that say
	// nothing of them; the record's counts are then exact per event and
	// its token_source is "tokenizer".
	Tokens *tokencount.Counter
	// Journal, when set, gets each request as it finishes (see [Journal]).
	Journal Journal
	// StartAt, when set, holds the measured requests until this instant
	// on Clock (after the cold and warm-up requests): the common start
	// of a sharded run's processes (bench --start-at).
	StartAt time.Time
	// Began, when set, is told the instant on Clock the measured
	// requests began (an open loop's schedule origin).
	Began func(time.Time)
}

// Progress is the state of a run after a request completed.
type Progress struct {
	// Phase is "cold", "warmup" or "measure".
	Phase  string
	Done   int
	Total  int
	Errors int
	// TTFTP50Ms is the running median TTFT of the measured requests.
	TTFTP50Ms float64
	Last      *runfile.Request
}

// Run carries out the workload. It returns the requests in the order they
// were issued (cold, warm-up, measured), indexed from 0, and ctx's error if
// the run was cancelled.
func Run(ctx context.Context, cfg Config) ([]runfile.Request, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if f := cfg.Fatal; f != nil {
		prog := cfg.Progress
		cfg.Progress = func(p Progress) {
			if err := f(p.Last); err != nil {
				cancel(err)
			}
			if prog != nil {
				prog(p)
			}
		}
	}
	out, err := run(ctx, cfg)
	if cause := context.Cause(ctx); err != nil && cause != nil {
		err = cause
	}
	return out, err
}

func run(ctx context.Context, cfg Config) ([]runfile.Request, error) {
	var out []runfile.Request
	measured, _ := requests(cfg.Prompts)
	warm, _ := requests(cfg.WarmupPrompts)
	total := measured + warm
	if cfg.ColdPrompt != nil {
		total++
	}
	prog := progress{cfg: cfg, total: total}
	if cfg.ColdPrompt != nil {
		r := one(ctx, cfg, *cfg.ColdPrompt)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		r.Cold = true
		r.Index = len(out)
		out = append(out, r)
		prog.add("cold", r.Index, &out[len(out)-1])
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	for _, p := range cfg.WarmupPrompts {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		ask(ctx, cfg, p, func(_ int, _ time.Time, r runfile.Request) {
			if ctx.Err() != nil {
				return
			}
			r.Warmup = true
			r.Index = len(out)
			out = append(out, r)
			prog.add("warmup", r.Index, &out[len(out)-1])
		})
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	if !cfg.StartAt.IsZero() && cfg.clock().SleepUntil(ctx, cfg.StartAt) != nil {
		return out, ctx.Err()
	}
	if cfg.Began != nil {
		cfg.Began(cfg.clock().Now())
	}
	var done []runfile.Request
	var replayErr error
	if cfg.Schedule != nil || cfg.Replay != nil {
		done, replayErr = openLoop(ctx, cfg, &prog)
	} else {
		done = closedLoop(ctx, cfg, &prog)
	}
	for _, r := range done {
		r.Index = len(out)
		out = append(out, r)
	}
	if replayErr != nil && ctx.Err() == nil {
		return out, replayErr
	}
	return out, ctx.Err()
}

// closedLoop runs cfg.Prompts with cfg.Concurrency workers; each worker
// sends its next request as soon as its previous one ends (a
// conversation's turns one after another, each after its think time, so
// Concurrency counts users).
func closedLoop(ctx context.Context, cfg Config, prog *progress) []runfile.Request {
	c := max(cfg.Concurrency, 1)
	total, first := requests(cfg.Prompts)
	results := make([]slot, total)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(c, len(cfg.Prompts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ask(ctx, cfg, cfg.Prompts[i], func(k int, _ time.Time, r runfile.Request) {
					if ctx.Err() != nil && r.ErrorKind == runfile.ErrorCancelled {
						return // cut short by the run's end, not measured
					}
					j := first[i] + k
					results[j] = slot{r: r, done: true}
					prog.add("measure", j, &results[j].r)
				})
			}
		}()
	}
feed:
	for i := range cfg.Prompts {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return finished(results)
}

// slot holds the record of one measured request, once it finished.
type slot struct {
	r    runfile.Request
	done bool
}

// finished returns the records of the slots whose request finished, in
// slot order.
func finished(slots []slot) []runfile.Request {
	var out []runfile.Request
	for _, s := range slots {
		if s.done {
			out = append(out, s.r)
		}
	}
	return out
}

// one sends a single prompt and records it.
func one(ctx context.Context, cfg Config, p suite.Prompt) runfile.Request {
	req := Request(p, cfg.MaxTokens)
	r := cfg.record(cfg.do(ctx, req))
	cfg.countPrompt(&r, req)
	r.Category = p.Category
	r.PromptID = p.ID
	return r
}

// record returns the run file's record of tr, its tokens counted with
// cfg.Tokens when set.
func (cfg Config) record(tr *stream.Trace) runfile.Request {
	r := Record(tr)
	if cfg.Tokens != nil && len(tr.TextEnds) == len(tr.TokenTimes) && len(tr.TokenTimes) > 0 {
		r.TokenCounts = cfg.Tokens.PerEvent(tr.Text, tr.TextEnds)
		r.TokenSource = runfile.TokensTokenizer
		if tr.Usage == nil || tr.Usage.CompletionTokens == 0 {
			r.OutputTokens = 0
			for _, n := range r.TokenCounts {
				r.OutputTokens += n
			}
		}
	}
	return r
}

// Request builds the stream request for prompt p; maxTokens > 0 overrides
// the prompt's own limit.
func Request(p suite.Prompt, maxTokens int) stream.Request {
	var msgs []api.Message
	if p.System != "" {
		msgs = append(msgs, api.Message{Role: "system", Content: api.Content(p.System)})
	}
	msgs = append(msgs, api.Message{Role: "user", Content: api.Content(p.Text)})
	mt := p.MaxTokens
	if maxTokens > 0 {
		mt = maxTokens
	}
	return stream.Request{Messages: msgs, Prompt: p.Text, MaxTokens: mt}
}

// progress serialises progress reports.
type progress struct {
	cfg   Config
	total int
	mu    sync.Mutex
	done  int
	errs  int
	ttfts []float64
}

// add counts a finished request; slot is its place in the order of issue
// within its phase, for the journal.
func (p *progress) add(phase string, slot int, r *runfile.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cfg.Journal != nil {
		p.cfg.Journal.Append(journalPhase(phase), slot, r)
	}
	p.done++
	if !r.OK() {
		p.errs++
	}
	if phase == "measure" {
		v := measure.Of(r, stats.DefaultDisplay)
		p.ttfts = append(p.ttfts, v.Values(measure.TTFT)...)
	}
	if p.cfg.Progress == nil {
		return
	}
	s := append([]float64(nil), p.ttfts...)
	sort.Float64s(s)
	p.cfg.Progress(Progress{Phase: phase, Done: p.done, Total: p.total, Errors: p.errs, TTFTP50Ms: stats.Percentile(s, 50), Last: r})
}
