// Package mock is tokenpulse's scripted target: a [server.Backend] that
// emits words of a small fixed vocabulary on a timing [Profile] (time to
// first token, inter-token latency, jitter, stalls, several tokens per
// event, a slower first request, errors at a rate, a reasoning model's
// thinking before the answer). Served by
// internal/server it keeps the stream contract, and every event carries
// its emit time, so users can test their pipelines against it and
// tokenpulse's tests can hold measured token times against ground truth.
//
// Pacing is against absolute deadlines: the token of index i is due at
// start + TTFT + i·ITL (plus stalls and jitter), where start is when
// Generate began, so slow writes never accumulate into drift. Each piece's
// At is read from the clock at the moment it is emitted. The context is
// checked before every token.
//
//	b := mock.New(mock.Profile{TTFT: 150 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 30}, nil)
//	srv, _ := server.New(b, server.Options{Parallel: 1024})
//
// A Backend is safe for concurrent use; it does no computing, so it serves
// as many streams at once as the server admits.
package mock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/clock"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

// ModelName is the model the mock answers to.
const ModelName = "mock"

// Backend is the scripted backend.
type Backend struct {
	p     Profile
	clock clock.Clock
	count atomic.Uint64 // requests served so far
}

// New returns a backend with profile p, on clock c (nil = [clock.Real]).
// p should have passed [Profile.Validate]; a TokensPerEvent of 0 is read
// as 1.
func New(p Profile, c clock.Clock) *Backend {
	if c == nil {
		c = clock.Real{}
	}
	if p.TokensPerEvent <= 0 {
		p.TokensPerEvent = 1
	}
	return &Backend{p: p, clock: c}
}

// Profile returns the backend's profile.
func (b *Backend) Profile() Profile { return b.p }

// Models implements server.Backend.
func (b *Backend) Models() []string { return []string{ModelName} }

// Warmup implements server.Backend; the mock has nothing to warm, and
// its warm-up does not count as its cold request.
func (b *Backend) Warmup(ctx context.Context) (*api.Warmup, error) {
	return &api.Warmup{}, ctx.Err()
}

// vocabulary is the mock's words: lorem-like, deterministic.
var vocabulary = strings.Fields(`lorem ipsum dolor sit amet consectetur
adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna
aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi
aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate
velit esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat
non proident sunt culpa qui officia deserunt mollit anim id est laborum`)

// Word returns the text of output token i of the request of ordinal ord:
// a vocabulary word, with a leading space after the first token.
func Word(ord uint64, i int) string {
	w := vocabulary[(ord*13+uint64(i)*7)%uint64(len(vocabulary))]
	if i == 0 {
		return w
	}
	return " " + w
}

// Generate implements server.Backend: it emits the profile's tokens on
// their deadlines.
func (b *Backend) Generate(ctx context.Context, req *server.GenRequest, emit func(server.Piece) error) (server.GenResult, error) {
	ord := b.count.Add(1) - 1
	rng := rand.New(rand.NewPCG(b.p.Seed, ord))
	if b.p.ErrorRate > 0 && rng.Float64() < b.p.ErrorRate {
		return server.GenResult{}, &server.RequestError{
			Status:  500,
			Type:    "server_error",
			Message: fmt.Sprintf("mock: injected error (error rate %g)", b.p.ErrorRate),
		}
	}
	start := b.clock.Now()
	prompt := promptText(req)
	res := server.GenResult{PromptTokens: len(strings.Fields(prompt)), FinishReason: "stop"}
	// The thinking comes first and counts against max_tokens, as a
	// reasoning model's does.
	thinking := b.p.ReasoningTokens
	n := thinking + b.p.Tokens
	if req.MaxTokens > 0 && (req.MaxTokens < n || req.IgnoreEOS) {
		// ignore_eos generates past the answer's end, up to max_tokens.
		n = req.MaxTokens
		res.FinishReason = "length"
	}
	thinking = min(thinking, n)
	pace := b.p.ReasoningITL
	if pace == 0 {
		pace = b.p.ITL
	}
	// dueAfter is when token t is due from the first token: thinking
	// token j at j·pace, answer token i at thinking·pace + i·ITL.
	dueAfter := func(t int) time.Duration {
		if t < thinking {
			return time.Duration(t) * pace
		}
		return time.Duration(thinking)*pace + time.Duration(t-thinking)*b.p.ITL
	}
	stalls := b.p.Stall > 0 && (b.p.StallEvery > 0 || b.p.StallProb > 0) &&
		(b.p.StallMatch == "" || strings.Contains(strings.ToLower(prompt), strings.ToLower(b.p.StallMatch)))
	ttft := b.p.TTFT
	if ord == 0 {
		ttft += b.p.ColdExtra
	}

	var (
		shift     time.Duration // stalls so far
		prev      = start       // the previous event's deadline
		first, at time.Time
		text      strings.Builder
		k         = b.p.TokensPerEvent
	)
	for i := 0; i < n; {
		end := min(i+k, n)
		if i < thinking {
			end = min(end, thinking) // an event is thinking or answer, not both
		}
		last := end - 1
		text.Reset()
		for t := i; t <= last; t++ {
			if stalls && t > 0 && ((b.p.StallEvery > 0 && t%b.p.StallEvery == 0) || (b.p.StallProb > 0 && rng.Float64() < b.p.StallProb)) {
				shift += b.p.Stall
			}
			text.WriteString(Word(ord, t))
		}
		due := start.Add(ttft + dueAfter(last) + shift)
		if b.p.Jitter > 0 {
			due = due.Add(time.Duration(rng.Int64N(2*int64(b.p.Jitter)+1)) - b.p.Jitter)
		}
		if due.Before(prev) {
			due = prev
		}
		prev = due
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := b.clock.SleepUntil(ctx, due); err != nil {
			return res, err
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		at = b.clock.Now()
		if i == 0 {
			first = at
			res.Prefill = at.Sub(start)
		}
		if err := emit(server.Piece{Text: text.String(), Tokens: last - i + 1, Reasoning: i < thinking, At: at}); err != nil {
			return res, err
		}
		res.OutputTokens = last + 1
		i = end
	}
	if !first.IsZero() {
		res.Decode = at.Sub(first)
	}
	return res, nil
}

// promptText is the request's prompt, or its messages' contents joined.
func promptText(req *server.GenRequest) string {
	if !req.Chat {
		return req.Prompt
	}
	var sb strings.Builder
	for i, m := range req.Messages {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(string(m.Content))
	}
	return sb.String()
}

// Kind reports the backend's kind, "mock", on the server's /health.
func (b *Backend) Kind() string { return "mock" }
