// Package embedded is the [server.Backend] over tokenpulse's own pure-Go
// engine (package engine): `tokenpulse serve` with no --upstream.
//
// The backend keeps one engine session per parallel slot (each owns its KV
// cache, allocated once for the whole context); a request borrows a session
// for the length of its generation. The server's admission already bounds
// how many requests generate at once, so a request never waits here when
// the server and the backend are given the same Parallel.
//
// A prompt that does not fit in the context is rejected with a
// [server.RequestError] (400, code "context_length_exceeded") before any
// token; a request asking for more tokens than the context has room for
// after its prompt gets what fits, ending with finish reason "length".
// Stop sequences end the answer before the token that completes one;
// text of a stop sequence that spans tokens may already have been sent when
// the match completes (the stream is not held back to wait for it, which
// would distort the token gaps being measured).
//
// Example:
//
//	b, err := embedded.Load(ctx, embedded.Options{Parallel: 1}) // the bundled model
//	if err != nil { ... }
//	defer b.Close()
//	s, _ := server.New(b, server.Options{Parallel: 1})
//	_ = s.WarmUp(ctx)
//
// A Backend is safe for concurrent use.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

// BundledName is the model name the bundled model is served under.
const BundledName = "stories260K"

// Options configures [Load].
type Options struct {
	// Engine is passed to engine.Load (ModelPath "" = the bundled model).
	Engine engine.Options
	// Parallel is the number of sessions (default 1); give the server the
	// same number.
	Parallel int
	// Name is the model name served (default: BundledName for the bundled
	// model, else the file's name without ".gguf").
	Name string
	// RepeatPenalty is applied to every request (0 = off); the OpenAI API
	// has no field for it.
	RepeatPenalty float32
	// NoPromptCache runs every prompt token of every request. By default
	// a request (unless it sends cache_prompt: false) reuses the keys and
	// values of the longest prefix it shares with what a session ran
	// last, as llama-server does.
	NoPromptCache bool
}

// Backend serves requests from an engine model. Build it with [Load] or
// [New].
type Backend struct {
	m       *engine.Model
	name    string
	repeat  float32
	owned   bool // Close closes the model
	noCache bool // Options.NoPromptCache
	// slots holds a token for each session lent out: at most maxMade at
	// once.
	slots   chan struct{}
	mu      sync.Mutex
	idle    []*engine.Session // the sessions not lent out
	made    int
	maxMade int
	// broken holds the engine's error once the model file faulted
	// (engine.ErrModelFault): every later request fails with
	// server.ErrBroken without touching the mapping again.
	broken atomic.Pointer[error]
}

// Load loads the model of o.Engine and returns a backend that owns it.
// The engine's memory check counts Parallel sessions unless
// o.Engine.Sessions says otherwise.
func Load(ctx context.Context, o Options) (*Backend, error) {
	if o.Engine.Sessions == 0 {
		o.Engine.Sessions = max(o.Parallel, 1)
	}
	m, err := engine.Load(ctx, o.Engine)
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	name := o.Name
	if name == "" {
		name = ModelName(o.Engine.ModelPath)
	}
	b := New(m, name, o.Parallel)
	b.repeat, b.owned, b.noCache = o.RepeatPenalty, true, o.NoPromptCache
	return b, nil
}

// ModelName is the name a model file is served under by default.
func ModelName(path string) string {
	if path == "" {
		return BundledName
	}
	return strings.TrimSuffix(filepath.Base(path), ".gguf")
}

// New returns a backend over a loaded model with parallel sessions
// (default 1). The caller keeps ownership of m.
func New(m *engine.Model, name string, parallel int) *Backend {
	parallel = max(parallel, 1)
	return &Backend{m: m, name: name, slots: make(chan struct{}, parallel), maxMade: parallel}
}

// Close closes the model when the backend loaded it.
func (b *Backend) Close() error {
	if b.owned {
		return b.m.Close()
	}
	return nil
}

// Model returns the engine model.
func (b *Backend) Model() *engine.Model { return b.m }

// Models returns the one model name served.
func (b *Backend) Models() []string { return []string{b.name} }

// Warmup pages the weights in, allocates a KV cache and runs one forward
// pass (engine.Model.Warmup), then allocates the other slots' sessions.
func (b *Backend) Warmup(ctx context.Context) (*api.Warmup, error) {
	w, err := b.m.Warmup(ctx)
	if err != nil {
		if errors.Is(err, engine.ErrModelFault) {
			return nil, b.fail(err)
		}
		return nil, fmt.Errorf("embedded: %w", err)
	}
	// The first session made now is the one warm-up touched; make the
	// rest too, so no request pays for a KV cache.
	var got []*engine.Session
	for range b.maxMade {
		s, err := b.session(ctx, nil)
		if err != nil {
			for _, s := range got {
				b.release(s)
			}
			return nil, err
		}
		got = append(got, s)
	}
	for _, s := range got {
		b.release(s)
	}
	return &api.Warmup{
		LoadNS: int64(w.Load), PageInNS: int64(w.PageIn), KVInitNS: int64(w.KVInit),
		FirstForwardNS: int64(w.FirstForward), TotalNS: int64(w.Total),
	}, nil
}

// session borrows a session, waiting while Parallel are lent out: of the
// idle ones, the one whose cache holds the longest prefix of prompt if
// that is at least half of it; else a new one while fewer than Parallel
// exist, else the one idle longest, so that a prompt sharing little (a
// start-of-text token, a short system prompt) does not take another
// conversation's cache (llama-server's slot similarity rule). Give it
// back with release.
func (b *Backend) session(ctx context.Context, prompt []int32) (*engine.Session, error) {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	best, most := -1, 0
	for i, s := range b.idle {
		if n := s.Cached(prompt); n > most {
			best, most = i, n
		}
	}
	if 2*most < len(prompt) || best < 0 {
		if b.made < b.maxMade {
			b.made++
			return b.m.NewSession(), nil
		}
		best = 0 // release appends: the first has been idle longest
	}
	s := b.idle[best]
	b.idle = slices.Delete(b.idle, best, best+1)
	return s, nil
}

// release gives back a session that session lent.
func (b *Backend) release(s *engine.Session) {
	b.mu.Lock()
	b.idle = append(b.idle, s)
	b.mu.Unlock()
	<-b.slots
}

// errStopSequence ends generation at a stop sequence.
var errStopSequence = errors.New("stop sequence")

// Check refuses a prompt that leaves no room for an answer in the context,
// before the server commits to a stream (server.Checker), and keeps the
// tokenized prompt in req.Prepared for Generate.
func (b *Backend) Check(req *server.GenRequest) error {
	prompt, err := b.prompt(req)
	if err == nil {
		req.Prepared = prompt
	}
	return err
}

// prompt tokenizes the request's prompt (through the chat template for a
// chat request) and checks that it fits the context with room to answer.
func (b *Backend) prompt(req *server.GenRequest) ([]int32, error) {
	tok := b.m.Tokenizer()
	var prompt []int32
	if req.Chat {
		msgs := make([]engine.Message, len(req.Messages))
		for i, m := range req.Messages {
			role := m.Role
			switch role {
			case "developer":
				role = "system"
			case "tool":
				role = "user"
			}
			msgs[i] = engine.Message{Role: role, Content: string(m.Content)}
		}
		prompt = tok.Encode(b.m.ApplyChat(msgs), true, true)
	} else {
		prompt = tok.Encode(req.Prompt, true, false)
	}
	if ctxLen := b.m.Ctx(); len(prompt) >= ctxLen {
		return nil, &server.RequestError{
			Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "messages", Code: "context_length_exceeded",
			Message: fmt.Sprintf("the prompt is %d tokens; this model's context is %d, leaving no room for an answer", len(prompt), ctxLen),
		}
	}
	return prompt, nil
}

// Generate tokenizes the request, borrows a session and generates,
// emitting each token as it leaves the engine. The engine checks ctx
// before every token.
func (b *Backend) Generate(ctx context.Context, req *server.GenRequest, emit func(server.Piece) error) (server.GenResult, error) {
	var res server.GenResult
	if err := b.broken.Load(); err != nil {
		return res, fmt.Errorf("embedded: %w: %w", server.ErrBroken, *err)
	}
	prompt, ok := req.Prepared.([]int32)
	if !ok {
		var err error
		if prompt, err = b.prompt(req); err != nil {
			return res, err
		}
	}
	maxTokens := min(req.MaxTokens, b.m.Ctx()-len(prompt))

	s, err := b.session(ctx, prompt)
	if err != nil {
		return res, err
	}
	defer b.release(s)

	p := engine.Params{
		MaxTokens: maxTokens, Temperature: float32(req.Temperature), TopP: float32(req.TopP),
		TopK: req.TopK, MinP: float32(req.MinP), RepeatPenalty: b.repeat, Seed: uint64(req.Seed),
		IgnoreEOS: req.IgnoreEOS, ReusePrefix: !b.noCache && !req.NoPromptCache,
	}
	var text strings.Builder
	stopped := false
	out, err := s.Generate(ctx, prompt, p, func(t engine.Token) error {
		piece := t.Text
		if len(req.Stop) > 0 {
			before := text.Len()
			text.WriteString(t.Text)
			if i := firstStop(text.String(), req.Stop, before); i >= 0 {
				stopped = true
				if i > before {
					if err := emit(server.Piece{Text: text.String()[before:i], Tokens: 1, At: t.At}); err != nil {
						return err
					}
				}
				return errStopSequence
			}
		}
		return emit(server.Piece{Text: piece, Tokens: 1, At: t.At})
	})
	res = server.GenResult{PromptTokens: out.PromptTokens, OutputTokens: out.OutputTokens, CachedTokens: out.CachedTokens, Prefill: out.Prefill, Decode: out.Decode}
	switch {
	case stopped && errors.Is(err, errStopSequence):
		res.FinishReason = "stop"
		return res, nil
	case errors.Is(err, engine.ErrContextFull):
		return res, &server.RequestError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "messages", Code: "context_length_exceeded", Message: err.Error()}
	case err != nil:
		return res, b.fail(err)
	}
	switch out.StopReason {
	case "length", "context":
		res.FinishReason = "length"
	default:
		res.FinishReason = "stop"
	}
	return res, nil
}

// fail returns the error for err from the engine: one wrapping
// server.ErrBroken when the model file faulted (and every later request
// gets that too), else err itself.
func (b *Backend) fail(err error) error {
	if !errors.Is(err, engine.ErrModelFault) {
		return err
	}
	b.broken.CompareAndSwap(nil, &err)
	return fmt.Errorf("embedded: %w: %w", server.ErrBroken, err)
}

// firstStop returns where the earliest stop sequence starts in text, when
// one ends after byte from (so it was completed by the latest token), or
// -1.
func firstStop(text string, stops []string, from int) int {
	best := -1
	for _, s := range stops {
		if s == "" {
			continue
		}
		start := max(from-len(s)+1, 0)
		if i := strings.Index(text[start:], s); i >= 0 && (best < 0 || start+i < best) {
			best = start + i
		}
	}
	return best
}

var _ server.Backend = (*Backend)(nil)

// Kind reports the backend's kind, "embedded", on the server's /health.
func (b *Backend) Kind() string { return "embedded" }
