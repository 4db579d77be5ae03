package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
)

// Backend produces the tokens of a request. The embedded engine, the
// gateway to another runtime and the scripted mock are backends; the
// server around them owns the stream contract (ids, retry, abort,
// admission, metrics), so every backend serves the same contract.
//
// A backend must check ctx before every token it emits and return promptly
// once ctx is done: that is what makes an abort real.
type Backend interface {
	// Models lists the model names the backend answers to; the first is
	// the default.
	Models() []string
	// Warmup prepares the backend before the server reports ready, and
	// returns its cold-start breakdown (nil when it has none).
	Warmup(ctx context.Context) (*api.Warmup, error)
	// Generate runs one request, calling emit for each piece of output as
	// it leaves the backend, in order. It returns when the output is
	// complete, when ctx is done (with ctx's error), or when emit returns
	// an error (with that error). Invalid input is reported with a
	// *RequestError before any piece is emitted.
	Generate(ctx context.Context, req *GenRequest, emit func(Piece) error) (GenResult, error)
}

// ErrBroken is wrapped by a backend's error when the backend can serve
// no further request (its model file changed or vanished underneath it):
// the request fails, the server marks itself unhealthy and keeps running.
var ErrBroken = errors.New("backend broken")

// Kinded is implemented by backends that name their kind ("embedded",
// "gateway", "mock"); the server reports it on /health so that a client
// can record what it measured.
type Kinded interface {
	Kind() string
}

// kindOf returns b's kind, or "" when it does not say.
func kindOf(b Backend) string {
	if k, ok := b.(Kinded); ok {
		return k.Kind()
	}
	return ""
}

// Checker is implemented by backends that can tell, before generating,
// whether they would refuse a request (a prompt longer than the context).
// With it the server answers a refusal as a 4xx before any output, and
// otherwise sends a stream's headers and "retry: 0" as soon as the request
// has a slot, instead of with the first token: a client then sees the
// queue wait before its headers and the prefill after them, as with
// llama.cpp and vLLM.
type Checker interface {
	// Check returns a *RequestError for a request the backend would
	// refuse, nil otherwise. It must be cheap and must not generate; it
	// may leave what it prepared in req.Prepared for Generate.
	Check(req *GenRequest) error
}

// GenRequest is a validated request handed to a backend.
type GenRequest struct {
	// ID is the request id (the client's X-Request-ID or a fresh one).
	ID    string
	Model string
	// Chat is true for /v1/chat/completions (Messages), false for
	// /v1/completions (Prompt).
	Chat     bool
	Messages []api.Message
	Prompt   string
	// MaxTokens is the output limit, already defaulted and range-checked.
	MaxTokens   int
	Temperature float64
	TopP        float64
	TopK        int
	MinP        float64
	Seed        int64
	Stop        []string
	// IgnoreEOS (the llama.cpp and vLLM extension ignore_eos) asks for
	// generation past the end of sequence, up to MaxTokens.
	IgnoreEOS bool
	// NoPromptCache (the request's cache_prompt: false) asks for every
	// prompt token to be run, none reused from the backend's cache.
	NoPromptCache bool
	// Received is when the server received the request.
	Received time.Time
	// Started is when the request left the queue and began to run.
	Started time.Time
	// Prepared is the backend's own: what its Check made of the request
	// (the embedded engine's tokenized prompt), so that Generate does not
	// do it again. nil when Check was not called.
	Prepared any
}

// Piece is one emitted piece of output: normally one token.
type Piece struct {
	// Text is the piece's text (may be empty for a token that completes no
	// character yet).
	Text string
	// Tokens is the number of tokens the piece carries (0 is read as 1).
	Tokens int
	// Reasoning marks a reasoning ("thinking") token.
	Reasoning bool
	// At is when the piece left the backend (the server's emit time).
	At time.Time
}

// GenResult is the outcome of a generation.
type GenResult struct {
	PromptTokens int
	OutputTokens int
	// CachedTokens is how many of the prompt's first tokens the backend
	// reused from its cache rather than ran (0 for a gateway).
	CachedTokens int
	Prefill      time.Duration
	Decode       time.Duration
	// FinishReason is "stop" or "length" (OpenAI's values).
	FinishReason string
	// Upstream is the upstream's own usage, when a gateway received it.
	Upstream *api.Usage
}

// RequestError is a backend's rejection of a request: it becomes an HTTP
// status with an OpenAI-shaped error body.
type RequestError struct {
	Status  int
	Type    string // "invalid_request_error", "server_error", ...
	Param   string
	Code    string
	Message string
}

// Error implements error.
func (e *RequestError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message)
}
