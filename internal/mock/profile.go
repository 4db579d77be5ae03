package mock

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Profile is the mock's timing script.
type Profile struct {
	// TTFT is the time from the start of generation to the first token.
	TTFT time.Duration
	// ITL is the time between two tokens.
	ITL time.Duration
	// Jitter, when > 0, moves each event's deadline by a uniformly
	// distributed amount in [−Jitter, +Jitter] (never before the previous
	// event's deadline nor before the start), so the long-run rate stays
	// the profile's.
	Jitter time.Duration
	// Tokens is the output length, capped by the request's max_tokens
	// (finish reason "length" when capped, "stop" otherwise); a request
	// with ignore_eos and max_tokens gets max_tokens tokens, as a real
	// server that ignores the end of sequence would give.
	Tokens int
	// TokensPerEvent is how many tokens one event carries (default 1); an
	// event leaves when its last token is due.
	TokensPerEvent int
	// ColdExtra is added to the TTFT of the first request the backend
	// serves (its cold start).
	ColdExtra time.Duration
	// StallEvery, when > 0, stalls before every StallEvery-th token (the
	// tokens of index StallEvery, 2·StallEvery, ...).
	StallEvery int
	// StallProb is the probability that any token after the first is
	// stalled.
	StallProb float64
	// Stall is the length of a stall; it delays that token and every token
	// after it.
	Stall time.Duration
	// StallMatch, when set, limits stalls to requests whose prompt
	// contains it (case-insensitive).
	StallMatch string
	// ErrorRate is the probability that a request fails: it is rejected
	// with a 500 server_error before any token.
	ErrorRate float64
	// ReasoningTokens, when > 0, makes the mock a reasoning model: that
	// many thinking tokens come first, streamed as
	// delta.reasoning_content (as llama-server and DeepSeek send them),
	// then the Tokens of the answer. Thinking counts against max_tokens.
	// ReasoningITL is the time between thinking tokens (0: ITL); the
	// first answer token comes ReasoningITL after the last thinking one,
	// so it is due at TTFT + ReasoningTokens·ReasoningITL.
	ReasoningTokens int
	ReasoningITL    time.Duration
	// Seed seeds the random draws (jitter, stall and error), which are
	// made per request from the seed and the request's ordinal, so a run
	// with the same seed and order repeats exactly.
	Seed uint64
}

// DefaultProfile is the profile of the example: 150 ms to the
// first token, 20 ms between tokens, 30 tokens, one per event.
func DefaultProfile() Profile {
	return Profile{TTFT: 150 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 30, TokensPerEvent: 1}
}

// AddFlags binds the profile's fields to flags of fs, with p's current
// values as defaults: --ttft, --itl, --jitter, --tokens,
// --tokens-per-event, --cold-extra, --stall, --stall-every, --stall-prob,
// --stall-match, --error-rate, --seed, --reasoning-tokens,
// --reasoning-itl.
func (p *Profile) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&p.TTFT, "ttft", p.TTFT, "time to the first token")
	fs.DurationVar(&p.ITL, "itl", p.ITL, "time between tokens")
	fs.DurationVar(&p.Jitter, "jitter", p.Jitter, "uniform jitter ± on each event's deadline")
	fs.IntVar(&p.Tokens, "tokens", p.Tokens, "output tokens per answer (capped by max_tokens)")
	fs.IntVar(&p.TokensPerEvent, "tokens-per-event", p.TokensPerEvent, "tokens carried by one event")
	fs.DurationVar(&p.ColdExtra, "cold-extra", p.ColdExtra, "extra TTFT of the first request (cold start)")
	fs.DurationVar(&p.Stall, "stall", p.Stall, "length of a stall")
	fs.IntVar(&p.StallEvery, "stall-every", p.StallEvery, "stall before every Nth token (0 = never)")
	fs.Float64Var(&p.StallProb, "stall-prob", p.StallProb, "probability that a token is stalled")
	fs.StringVar(&p.StallMatch, "stall-match", p.StallMatch, "stall only prompts containing this text (case-insensitive)")
	fs.Float64Var(&p.ErrorRate, "error-rate", p.ErrorRate, "probability that a request fails with a 500")
	fs.Uint64Var(&p.Seed, "seed", p.Seed, "seed of the random draws")
	fs.IntVar(&p.ReasoningTokens, "reasoning-tokens", p.ReasoningTokens, "thinking tokens before the answer, sent as delta.reasoning_content (0 = none)")
	fs.DurationVar(&p.ReasoningITL, "reasoning-itl", p.ReasoningITL, "time between thinking tokens (0 = --itl)")
}

// ParseProfile reads a profile written as comma-separated key=value pairs
// with the flag names of [Profile.AddFlags], starting from
// [DefaultProfile]: "ttft=150ms,itl=20ms,tokens=30,stall=300ms,stall-every=10".
func ParseProfile(s string) (Profile, error) {
	p := DefaultProfile()
	fs := pflag.NewFlagSet("profile", pflag.ContinueOnError)
	p.AddFlags(fs)
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Profile{}, fmt.Errorf("mock profile: %q is not key=value", kv)
		}
		k = strings.TrimSpace(k)
		if fs.Lookup(k) == nil {
			return Profile{}, fmt.Errorf("mock profile: unknown key %q", k)
		}
		if err := fs.Set(k, strings.TrimSpace(v)); err != nil {
			return Profile{}, fmt.Errorf("mock profile: %s: %w", k, err)
		}
	}
	if err := p.Validate(); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// Validate reports the first field out of range.
func (p Profile) Validate() error {
	switch {
	case p.TTFT < 0:
		return errors.New("mock profile: ttft must not be negative")
	case p.ITL < 0:
		return errors.New("mock profile: itl must not be negative")
	case p.Jitter < 0:
		return errors.New("mock profile: jitter must not be negative")
	case p.Tokens < 0:
		return errors.New("mock profile: tokens must not be negative")
	case p.TokensPerEvent < 0:
		return errors.New("mock profile: tokens-per-event must not be negative")
	case p.ColdExtra < 0:
		return errors.New("mock profile: cold-extra must not be negative")
	case p.StallEvery < 0:
		return errors.New("mock profile: stall-every must not be negative")
	case p.StallProb < 0 || p.StallProb > 1:
		return fmt.Errorf("mock profile: stall-prob must be in [0, 1], got %v", p.StallProb)
	case p.Stall < 0:
		return errors.New("mock profile: stall must not be negative")
	case p.ReasoningTokens < 0:
		return errors.New("mock profile: reasoning-tokens must not be negative")
	case p.ReasoningITL < 0:
		return errors.New("mock profile: reasoning-itl must not be negative")
	case p.ErrorRate < 0 || p.ErrorRate > 1:
		return fmt.Errorf("mock profile: error-rate must be in [0, 1], got %v", p.ErrorRate)
	}
	return nil
}
