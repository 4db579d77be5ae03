package engine

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/engine/tokenizer"
)

// Session runs generation for one conversation at a time. It owns a KV
// cache allocated once for the model's whole context, so no allocation or
// growth happens in the middle of an answer. A Session is not safe for
// concurrent use; a Model may have several.
type Session struct {
	m       *Model
	st      *state
	smp     *sampler
	recent  []int32 // (RepeatWindow) ring of the last tokens
	nRecent int
	now     func() time.Time
	one     [1]int32
	// cached are the tokens whose keys and values the KV cache holds, at
	// positions 0..len(cached)-1: what the last Generate ran through the
	// model (its prompt and every token it fed back), for the next one to
	// reuse (Params.ReusePrefix).
	cached []int32
}

// NewSession returns a session with its own KV cache. The first call after
// Warmup returns the session Warmup already touched.
func (m *Model) NewSession() *Session {
	m.mu.Lock()
	s := m.spare
	m.spare = nil
	m.mu.Unlock()
	if s != nil {
		return s
	}
	return &Session{
		m: m, st: newState(m), smp: newSampler(m.cfg.Vocab),
		recent: make([]int32, RepeatWindow), now: time.Now,
		// Room for the whole context: appending a token never allocates
		// in the middle of an answer.
		cached: make([]int32, 0, m.ctx),
	}
}

// Token is one generated token.
type Token struct {
	ID   int32
	Text string    // the text that became complete with this token (may be "")
	At   time.Time // when the token left the engine
}

// Result summarises one Generate call.
type Result struct {
	PromptTokens int
	OutputTokens int
	Prefill      time.Duration // prompt processing, up to the first token's logits
	Decode       time.Duration // from the first token's logits to the end
	// CachedTokens is how many of the prompt's first tokens were not run
	// again: their keys and values were in the session's cache from the
	// call before (Params.ReusePrefix). Prefill covers the rest.
	CachedTokens int
	// StopReason is "stop" (an end-of-generation token), "length"
	// (MaxTokens reached), "cancelled" (ctx done) or "context" (the
	// context is full).
	StopReason string
}

// Generate runs the prompt through the model and then samples tokens, one
// at a time, passing each to emit as soon as it is known. Generation stops
// at an end-of-generation token (not emitted; never sampled with
// p.IgnoreEOS), after p.MaxTokens tokens, when the context is full, when
// ctx is done (checked before every token and every prefill batch:
// StopReason "cancelled", with ctx's error) or when emit returns an error
// (returned as is).
//
// The session's cache is written from position 0 on every call, but for
// the prompt's first tokens that it already holds when p.ReusePrefix is
// set (Result.CachedTokens).
func (s *Session) Generate(ctx context.Context, prompt []int32, p Params, emit func(Token) error) (res Result, err error) {
	m := s.m
	// A fault on the mapped file (truncated underneath) is an error for
	// this request, ErrModelFault, not the end of the process.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer m.guard(&err)
	res = Result{PromptTokens: len(prompt)}
	if len(prompt) == 0 {
		return res, fmt.Errorf("engine: empty prompt")
	}
	for _, t := range prompt {
		if t < 0 || int(t) >= m.cfg.Vocab {
			return res, fmt.Errorf("engine: prompt token %d outside the vocabulary of %d", t, m.cfg.Vocab)
		}
	}
	if p.MaxTokens < 0 {
		return res, fmt.Errorf("engine: MaxTokens %d is negative", p.MaxTokens)
	}
	if len(prompt) > m.ctx || len(prompt)+p.MaxTokens > m.ctx {
		return res, fmt.Errorf("engine: %d prompt tokens + %d to generate > context of %d: %w", len(prompt), p.MaxTokens, m.ctx, ErrContextFull)
	}
	s.smp.seed(p.Seed)
	s.nRecent = 0
	for _, t := range prompt {
		s.remember(t)
	}
	var dec *tokenizer.StreamDecoder
	if m.tok != nil {
		dec = m.tok.NewStreamDecoder()
	}

	stop := func() bool { return ctx.Err() != nil }
	start := s.now()
	pos := 0
	if p.ReusePrefix {
		// The last prompt token is run whatever the cache holds: its
		// logits are the first token's.
		pos = min(commonPrefix(s.cached, prompt), len(prompt)-1)
	}
	res.CachedTokens = pos
	s.cached = s.cached[:pos]
	for pos < len(prompt) {
		if err := ctx.Err(); err != nil {
			res.StopReason = "cancelled"
			res.Prefill = s.now().Sub(start)
			return res, err
		}
		n := min(m.batch, len(prompt)-pos)
		if !m.forward(s.st, prompt[pos:pos+n], pos, pos+n == len(prompt), stop) {
			res.StopReason = "cancelled"
			res.Prefill = s.now().Sub(start)
			return res, ctx.Err()
		}
		s.cached = append(s.cached, prompt[pos:pos+n]...)
		pos += n
	}
	var eog []int32
	if p.IgnoreEOS && m.tok != nil {
		for id := range int32(m.vocabOut) {
			if m.tok.IsEOG(id) {
				eog = append(eog, id)
			}
		}
	}
	decStart := s.now()
	res.Prefill = decStart.Sub(start)
	for {
		if err := ctx.Err(); err != nil {
			res.StopReason = "cancelled"
			res.Decode = s.now().Sub(decStart)
			return res, err
		}
		for _, id := range eog {
			s.st.logits[id] = float32(math.Inf(-1))
		}
		// Rows past the tokenizer's vocabulary (padding) are never sampled.
		tok := s.smp.sample(s.st.logits[:m.vocabOut], &p, s.recentTokens())
		if m.tok != nil && m.tok.IsEOG(tok) {
			res.StopReason = "stop"
			res.Decode = s.now().Sub(decStart)
			return res, nil
		}
		res.OutputTokens++
		s.remember(tok)
		text := ""
		if dec != nil {
			text = dec.Next(tok)
		}
		if err := emit(Token{ID: tok, Text: text, At: s.now()}); err != nil {
			res.StopReason = "cancelled"
			res.Decode = s.now().Sub(decStart)
			return res, err
		}
		// The token is out: let its reader have this CPU now, if it waits
		// for one. A socket write wakes the reader onto the writer's CPU
		// (the kernel takes the writer to be about to sleep), where it
		// may not preempt this thread; with the workers busy too it then
		// waited out a whole forward pass. Served on 2 cores with the
		// client beside the server, that was one token in about a hundred
		// read 3.3 ms late, a quarter to two fifths of the client's gap
		// variance; with
		// the yield the client read 99 % of tokens within 0.2 ms of their
		// write. With no one waiting the call returns at once.
		yieldCPU()
		switch {
		case p.MaxTokens > 0 && res.OutputTokens >= p.MaxTokens:
			res.StopReason = "length"
		case pos >= m.ctx:
			res.StopReason = "context"
		}
		if res.StopReason != "" {
			res.Decode = s.now().Sub(decStart)
			return res, nil
		}
		s.one[0] = tok
		m.forward(s.st, s.one[:], pos, true, nil)
		s.cached = append(s.cached, tok)
		pos++
	}
}

// Cached returns how many of prompt's first tokens the session's cache
// holds (the longest prefix prompt shares with what the last Generate
// ran): what Generate with Params.ReusePrefix would not run again, but
// for the last prompt token, which is always run.
func (s *Session) Cached(prompt []int32) int { return commonPrefix(s.cached, prompt) }

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func (s *Session) remember(t int32) {
	s.recent[s.nRecent%len(s.recent)] = t
	s.nRecent++
}

// recentTokens returns the remembered tokens (order does not matter to the
// penalty).
func (s *Session) recentTokens() []int32 {
	return s.recent[:min(s.nRecent, len(s.recent))]
}

// Logits runs tokens through the session from position 0 one batch at a
// time and returns a copy of the logits after each token in positions,
// for tests and tools that compare distributions (teacher forcing).
func (s *Session) Logits(tokens []int32) (_ [][]float32, err error) {
	m := s.m
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer m.guard(&err)
	if len(tokens) == 0 || len(tokens) > m.ctx {
		return nil, fmt.Errorf("engine: %d tokens for a context of %d: %w", len(tokens), m.ctx, ErrContextFull)
	}
	s.cached = s.cached[:0] // overwritten from position 0 below
	out := make([][]float32, len(tokens))
	for i, t := range tokens {
		if t < 0 || int(t) >= m.cfg.Vocab {
			return nil, fmt.Errorf("engine: token %d outside the vocabulary", t)
		}
		m.forward(s.st, tokens[i:i+1], i, true, nil)
		out[i] = append([]float32(nil), s.st.logits...)
	}
	return out, nil
}
