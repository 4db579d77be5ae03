package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
	"github.com/tokenpulse/tokenpulse/tokencount"
)

// Aborter asks the target to stop a request; *stream.Client is one.
type Aborter interface {
	Abort(ctx context.Context, requestID string) (*api.AbortResponse, error)
}

// RapidFireConfig describes the rapid-fire scenario: an impatient user
// asks a question and, while the answer streams, asks the next one,
// aborting the first.
type RapidFireConfig struct {
	Client  Doer
	Aborter Aborter
	// Prompts are asked in pairs: Prompts[i] is interrupted by
	// Prompts[i+1] for even i. An odd last prompt is ignored.
	Prompts []suite.Prompt
	// AfterTokens is how many tokens of the first answer arrive before the
	// user interrupts (default 3).
	AfterTokens int
	MaxTokens   int
	Timeout     time.Duration
	Progress    func(Progress)
	// Tokens counts each event's tokens, as Config.Tokens.
	Tokens *tokencount.Counter
}

// RapidFire runs the scenario. For each pair it first asks the follow-up
// prompt alone (its reference TTFT), then asks the first prompt and, once
// AfterTokens tokens have arrived, sends the abort and the follow-up at the
// same instant. It returns every request (alone, interrupted, follow-up,
// in that order per pair) and one FollowUp per pair.
func RapidFire(ctx context.Context, cfg RapidFireConfig) ([]runfile.Request, []runfile.FollowUp, error) {
	after := cfg.AfterTokens
	if after <= 0 {
		after = 3
	}
	var reqs []runfile.Request
	var fus []runfile.FollowUp
	pairs := len(cfg.Prompts) / 2
	done := 0
	report := func(phase string, r *runfile.Request) {
		done++
		if cfg.Progress != nil {
			cfg.Progress(Progress{Phase: phase, Done: done, Total: pairs * 3, Last: r})
		}
	}
	base := Config{Client: cfg.Client, MaxTokens: cfg.MaxTokens, Timeout: cfg.Timeout, Tokens: cfg.Tokens}
	for i := 0; i+1 < len(cfg.Prompts); i += 2 {
		if ctx.Err() != nil {
			return reqs, fus, ctx.Err()
		}
		first, follow := cfg.Prompts[i], cfg.Prompts[i+1]

		alone := one(ctx, base, follow)
		alone.Index = len(reqs)
		reqs = append(reqs, alone)
		report("alone", &reqs[len(reqs)-1])

		fu, a, b := interrupt(ctx, cfg, base, first, follow, after)
		a.Index = len(reqs)
		reqs = append(reqs, a)
		report("interrupted", &reqs[len(reqs)-1])
		b.Index = len(reqs)
		reqs = append(reqs, b)
		report("follow-up", &reqs[len(reqs)-1])
		fu.Interrupted, fu.FollowUp = a.Index, b.Index
		fu.AloneTTFTNS = alone.TTFTNS
		fus = append(fus, fu)
	}
	return reqs, fus, ctx.Err()
}

// interrupt asks first, and after `after` tokens aborts it and asks follow.
func interrupt(ctx context.Context, cfg RapidFireConfig, base Config, first, follow suite.Prompt, after int) (runfile.FollowUp, runfile.Request, runfile.Request) {
	fu := runfile.FollowUp{TokensAfterAbort: -1}
	reqA := Request(first, cfg.MaxTokens)
	reqA.ID = newID("rf")
	// The trigger is the only thing taken from OnToken: the times come
	// from the trace itself once it ends, so that they are on the trace's
	// own clock (offsets from its Start, the retry's start when the first
	// attempt failed), whenever the Doer happened to begin it.
	var (
		trigger    = make(chan struct{})
		triggerOne sync.Once
	)
	reqA.OnToken = func(i int, _ time.Duration) {
		if i+1 >= after {
			triggerOne.Do(func() { close(trigger) })
		}
	}
	ctxA := ctx
	var cancelA context.CancelFunc = func() {}
	if cfg.Timeout > 0 {
		ctxA, cancelA = context.WithTimeout(ctx, cfg.Timeout)
	}
	defer cancelA()
	resA := make(chan *stream.Trace, 1)
	go func() { resA <- cfg.Client.Do(ctxA, reqA) }()

	var trA *stream.Trace
	triggered := false
	select {
	case <-trigger:
		triggered = true
	case trA = <-resA:
		// The answer ended. If its trigger token had arrived first (OnToken
		// runs before Do returns, so a closed trigger means it did), the
		// user still interrupted at that token: a select that finds both
		// ready picks at random, and must not decide the scenario.
		select {
		case <-trigger:
			triggered = true
		default:
		}
	case <-ctx.Done():
	}

	var abortResp *api.AbortResponse
	var abortErr error
	var abortAt time.Time // the instant the abort was sent
	var wg sync.WaitGroup
	var b runfile.Request
	if triggered && ctx.Err() == nil {
		abortAt = time.Now()
		wg.Add(2)
		go func() {
			defer wg.Done()
			abortResp, abortErr = cfg.Aborter.Abort(ctx, reqA.ID)
		}()
		go func() {
			defer wg.Done()
			b = one(ctx, base, follow)
		}()
		if trA == nil {
			trA = <-resA
		}
		wg.Wait()
	} else {
		if trA == nil {
			trA = <-resA
		}
		b = one(ctx, base, follow)
	}
	a := base.record(trA)
	a.Category, a.PromptID = first.Category, first.ID
	a.Aborted = true
	if abortErr != nil {
		fu.AbortError = abortErr.Error()
	}
	fu.AbortLatencyNS, fu.StopLatencyNS = abortLatencies(trA, abortAt)
	if abortResp != nil {
		fu.TokensAfterAbort = abortResp.TokensAfterAbort
	}
	fu.ForeignEvents = b.ForeignEvents
	fu.TTFTNS = b.TTFTNS
	return fu, a, b
}

// abortLatencies returns, for an answer aborted at abortAt (zero: never
// aborted), how long after the abort its last token arrived and its
// stream ended, each 0 when that happened before the abort. Both instants
// are the trace's own: its Start plus the offsets it recorded, so neither
// a Doer that began the request late nor a failed first attempt (Start is
// then the retry's) counts in them.
func abortLatencies(tr *stream.Trace, abortAt time.Time) (abortNS, stopNS int64) {
	if abortAt.IsZero() || tr == nil || tr.Start.IsZero() {
		return 0, 0
	}
	if n := len(tr.TokenTimes); n > 0 {
		if last := tr.Start.Add(tr.TokenTimes[n-1]); last.After(abortAt) {
			abortNS = int64(last.Sub(abortAt))
		}
	}
	if tr.LastEvent > 0 {
		if end := tr.Start.Add(tr.LastEvent); end.After(abortAt) {
			stopNS = int64(end.Sub(abortAt))
		}
	}
	return abortNS, stopNS
}

// newID returns a fresh request id with the given prefix.
func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}
