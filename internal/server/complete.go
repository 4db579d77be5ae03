package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tokenpulse/tokenpulse/api"
)

// errClientGone marks a failed write to the client.
var errClientGone = errors.New("client gone")

// roles are the chat roles accepted.
var roles = []string{"system", "developer", "user", "assistant", "tool"}

// parsed is a decoded, validated completion request.
type parsed struct {
	gen          GenRequest
	stream       bool
	includeUsage bool
}

// badRequest is a validation failure: it becomes a 4xx error body.
type badRequest struct {
	status int
	param  string
	code   string
	msg    string
}

func bad(param, code, format string, args ...any) *badRequest {
	return &badRequest{status: http.StatusBadRequest, param: param, code: code, msg: fmt.Sprintf(format, args...)}
}

// handleCompletion serves POST /v1/chat/completions (chat) and
// /v1/completions, streamed or not.
func (s *Server) handleCompletion(rw http.ResponseWriter, r *http.Request, key [32]byte, chat bool) {
	received := time.Now()
	route := "completions"
	if chat {
		route = "chat"
	}
	w := &statusWriter{ResponseWriter: rw}
	defer func() { s.m.requests.WithLabelValues(route, strconv.Itoa(max(w.status, 200))).Inc() }()
	if s.closing.Load() {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "server_error", "", "shutting_down", "the server is shutting down")
		return
	}

	if reason := s.broken.Load(); reason != nil {
		writeRequestError(w, brokenError(errors.New(*reason)))
		return
	}

	id := r.Header.Get(api.HeaderRequestID)
	if id == "" {
		id = NewRequestID()
	} else if !ValidRequestID(id) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", api.HeaderRequestID, "invalid_request_id", "X-Request-ID must be 1 to 128 printable ASCII bytes")
		return
	}
	w.Header().Set(api.HeaderRequestID, id)

	p, br := s.parse(w, r, chat)
	if br != nil {
		writeError(w, br.status, "invalid_request_error", br.param, br.code, br.msg)
		return
	}
	p.gen.ID = id
	p.gen.Received = received
	checked := false
	if c, ok := s.b.(Checker); ok {
		if err := c.Check(&p.gen); err != nil {
			var reqErr *RequestError
			switch {
			case errors.Is(err, ErrBroken):
				s.markBroken(err)
				writeRequestError(w, brokenError(err))
			case errors.As(err, &reqErr):
				writeRequestError(w, reqErr)
			default:
				writeError(w, http.StatusInternalServerError, "server_error", "", "", "checking the request failed: "+err.Error())
			}
			return
		}
		checked = true
	}

	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	e := &entry{id: id, keyHash: key, cancel: cancel, canceled: ctx.Done(), done: make(chan struct{})}
	if !s.reg.add(e) {
		writeError(w, http.StatusConflict, "invalid_request_error", api.HeaderRequestID, "duplicate_request_id", "a request with this id is already running")
		return
	}
	defer s.reg.remove(e)
	var once sync.Once
	finish := func() { once.Do(e.finish) }
	defer finish()
	// A disconnect cancels r.Context(); remember when, for the count of
	// tokens produced after it.
	stopAfter := context.AfterFunc(ctx, func() {
		e.mu.Lock()
		if e.abortAt.IsZero() {
			e.abortAt = time.Now()
		}
		e.mu.Unlock()
	})
	defer stopAfter()

	out := newOutput(w, p, chat, s.o.WriteTimeout)

	// Shutdown turns away queued requests (registry.cancelQueued after
	// closing is set): one registered before it is cancelled, one after
	// sees closing here.
	if s.closing.Load() {
		cancel(errShutdown)
	}
	s.m.queued.Inc()
	err := s.adm.acquire(ctx)
	s.m.queued.Dec()
	if errors.Is(err, errQueueFull) {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "rate_limit_error", "", "queue_full", "every generation slot is busy and the queue is full; retry later")
		return
	}
	if err != nil && errors.Is(context.Cause(ctx), errShutdown) && !out.begun() {
		// Queued at shutdown: no slot will free in time for it; another
		// server may serve it.
		finish()
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "server_error", "", "shutting_down", "the server is shutting down")
		return
	}
	if err != nil {
		finish()
		s.endAborted(ctx, out, e, GenResult{}, time.Time{})
		return
	}
	e.admitted.Store(true)
	defer s.adm.release()
	started := time.Now()
	p.gen.Started = started
	if checked && p.stream {
		// The backend has accepted the request: the headers need not wait
		// for the first token.
		if err := out.open(); err != nil {
			cancel(fmt.Errorf("%w: %w", errClientGone, err))
		}
	}
	s.m.queue.Observe(started.Sub(received).Seconds())
	s.m.inFlight.Inc()
	defer s.m.inFlight.Dec()

	var last time.Time
	emit := func(pc Piece) error {
		n := max(pc.Tokens, 1)
		if ctx.Err() != nil {
			e.afterAbort.Add(int64(n))
			s.m.afterAbort.Add(float64(n))
			return context.Cause(ctx)
		}
		if pc.At.IsZero() {
			pc.At = time.Now()
		}
		index := int(e.produced.Add(int64(n))) - n
		if index == 0 {
			s.m.ttft.Observe(pc.At.Sub(received).Seconds())
		} else {
			s.m.gap.Observe(pc.At.Sub(last).Seconds())
		}
		for range n - 1 {
			s.m.gap.Observe(0)
		}
		last = pc.At
		s.m.tokens.Add(float64(n))
		if err := out.piece(pc, index, n); err != nil {
			return fmt.Errorf("%w: %w", errClientGone, err)
		}
		return nil
	}
	res, err := s.b.Generate(ctx, &p.gen, emit)
	finish()

	var reqErr *RequestError
	switch {
	case ctx.Err() != nil || errors.Is(err, errClientGone):
		s.endAborted(ctx, out, e, res, started)
	case errors.Is(err, ErrBroken):
		s.markBroken(err)
		s.answerFailure(w, out, brokenError(err))
	case errors.As(err, &reqErr):
		if reqErr.Status >= 500 {
			s.log.Error("generation failed", "request_id", id, "status", reqErr.Status, "err", reqErr.Message)
		}
		s.answerFailure(w, out, reqErr)
	case err != nil:
		s.log.Error("generation failed", "request_id", id, "err", err)
		s.answerFailure(w, out, &RequestError{Status: http.StatusInternalServerError, Type: "server_error", Message: "generation failed: " + err.Error()})
	default:
		finishReason := res.FinishReason
		if finishReason == "" {
			finishReason = "stop"
		}
		out.end(finishReason, s.usage(e, res, err), s.timings(e, res, received, started))
		s.m.e2e.Observe(time.Since(received).Seconds())
		s.log.Info("request done", "request_id", id, "finish_reason", finishReason,
			"tokens", e.produced.Load(), "queue", started.Sub(received), "e2e", time.Since(received))
	}
}

// answerFailure answers a failed generation with e: the HTTP answer when
// the stream has not begun, else its error event. Both carry e.answer().
func (s *Server) answerFailure(w http.ResponseWriter, out *output, e *RequestError) {
	if !out.begun() {
		writeRequestError(w, e)
		return
	}
	out.fail(e)
}

// brokenError is the failure of a request the backend can no longer
// serve (ErrBroken): 503, code backend_broken.
func brokenError(err error) *RequestError {
	return &RequestError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "backend_broken",
		Message: "the backend can serve no further request: " + err.Error()}
}

// endAborted ends a request stopped by /v1/abort, a disconnect or
// shutdown: it counts the abort and, when the client is still there, ends
// the answer with finish_reason "abort".
func (s *Server) endAborted(ctx context.Context, out *output, e *entry, res GenResult, started time.Time) {
	cause := context.Cause(ctx)
	reason := "disconnect"
	switch {
	case errors.Is(cause, errAborted):
		reason = "endpoint"
	case errors.Is(cause, errShutdown):
		reason = "shutdown"
	}
	s.m.aborts.WithLabelValues(reason).Inc()
	s.log.Info("request stopped", "request_id", e.id, "reason", reason,
		"tokens", e.produced.Load(), "tokens_after_abort", e.afterAbort.Load())
	if reason == "disconnect" {
		return
	}
	var t *api.Timings
	if !started.IsZero() {
		t = s.timings(e, res, out.received, started)
	} else {
		t = &api.Timings{QueueNS: int64(time.Since(out.received))}
	}
	out.end("abort", s.usage(e, res, nil), t)
}

func (s *Server) usage(e *entry, res GenResult, err error) *api.Usage {
	n := int(e.produced.Load())
	if err == nil && res.OutputTokens > n {
		n = res.OutputTokens
	}
	u := &api.Usage{PromptTokens: res.PromptTokens, CompletionTokens: n, TotalTokens: res.PromptTokens + n}
	if res.CachedTokens > 0 {
		u.PromptTokensDetails = &api.PromptTokensDetails{CachedTokens: res.CachedTokens}
	}
	return u
}

func (s *Server) timings(e *entry, res GenResult, received, started time.Time) *api.Timings {
	return &api.Timings{
		QueueNS:      int64(started.Sub(received)),
		PrefillNS:    int64(res.Prefill),
		DecodeNS:     int64(res.Decode),
		PromptTokens: res.PromptTokens,
		OutputTokens: int(e.produced.Load()),
		CachedTokens: res.CachedTokens,
	}
}

// parse reads, decodes and validates the body.
func (s *Server) parse(w http.ResponseWriter, r *http.Request, chat bool) (*parsed, *badRequest) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, &badRequest{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type", msg: "Content-Type must be application/json"}
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.o.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &badRequest{status: http.StatusRequestEntityTooLarge, code: "body_too_large", msg: fmt.Sprintf("request body exceeds %d bytes", s.o.MaxBodyBytes)}
		}
		if isTimeout(err) {
			return nil, &badRequest{status: http.StatusRequestTimeout, code: "body_timeout", msg: fmt.Sprintf("the request body did not arrive within %v", s.o.BodyTimeout)}
		}
		return nil, bad("", "bad_body", "reading the body: %v", err)
	}
	if !utf8.Valid(body) {
		return nil, bad("", "invalid_utf8", "request body is not valid UTF-8")
	}
	p := &parsed{}
	g := &p.gen
	g.Chat = chat
	var (
		maxTokens        *int
		temp, topP, minP *float64
		topK             *int
		seed             *int64
		opts             *api.StreamOptions
	)
	if chat {
		var req api.ChatRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, bad("", "invalid_json", "malformed JSON: %v", err)
		}
		if len(req.Messages) == 0 {
			return nil, bad("messages", "missing_messages", "messages must hold at least one message")
		}
		for i, m := range req.Messages {
			if !slices.Contains(roles, m.Role) {
				return nil, bad(fmt.Sprintf("messages[%d].role", i), "invalid_role", "role %q is not one of %s", m.Role, strings.Join(roles, ", "))
			}
		}
		g.Model, g.Messages, g.Stop = req.Model, req.Messages, req.Stop
		p.stream, opts = req.Stream, req.StreamOptions
		maxTokens = req.MaxTokens
		if req.MaxCompletionTokens != nil {
			maxTokens = req.MaxCompletionTokens
		}
		temp, topP, topK, minP, seed = req.Temperature, req.TopP, req.TopK, req.MinP, req.Seed
		g.IgnoreEOS = req.IgnoreEOS != nil && *req.IgnoreEOS
		g.NoPromptCache = req.CachePrompt != nil && !*req.CachePrompt
	} else {
		var req api.CompletionRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, bad("", "invalid_json", "malformed JSON: %v", err)
		}
		g.Model, g.Prompt, g.Stop = req.Model, string(req.Prompt), req.Stop
		p.stream, opts = req.Stream, req.StreamOptions
		maxTokens = req.MaxTokens
		temp, topP, topK, minP, seed = req.Temperature, req.TopP, req.TopK, req.MinP, req.Seed
		g.IgnoreEOS = req.IgnoreEOS != nil && *req.IgnoreEOS
		g.NoPromptCache = req.CachePrompt != nil && !*req.CachePrompt
	}
	if br := checkUnsupported(body); br != nil {
		return nil, br
	}
	p.includeUsage = opts != nil && opts.IncludeUsage

	models := s.b.Models()
	if g.Model == "" && len(models) > 0 {
		g.Model = models[0]
	}
	if len(models) > 0 && !slices.Contains(models, g.Model) {
		return nil, &badRequest{status: http.StatusNotFound, param: "model", code: "model_not_found", msg: fmt.Sprintf("model %q does not exist; this server has %s", g.Model, strings.Join(models, ", "))}
	}
	g.MaxTokens = s.o.DefaultMaxTokens
	if maxTokens != nil {
		if *maxTokens < 1 || *maxTokens > s.o.MaxTokensLimit {
			return nil, bad("max_tokens", "invalid_value", "max_tokens must be between 1 and %d, got %d", s.o.MaxTokensLimit, *maxTokens)
		}
		g.MaxTokens = *maxTokens
	}
	g.Temperature, g.TopP = 1, 1
	if temp != nil {
		if *temp < 0 || *temp > 2 {
			return nil, bad("temperature", "invalid_value", "temperature must be between 0 and 2, got %g", *temp)
		}
		g.Temperature = *temp
	}
	if topP != nil {
		if *topP <= 0 || *topP > 1 {
			return nil, bad("top_p", "invalid_value", "top_p must be in (0, 1], got %g", *topP)
		}
		g.TopP = *topP
	}
	if topK != nil {
		if *topK < 0 {
			return nil, bad("top_k", "invalid_value", "top_k must not be negative, got %d", *topK)
		}
		g.TopK = *topK
	}
	if minP != nil {
		if *minP < 0 || *minP > 1 {
			return nil, bad("min_p", "invalid_value", "min_p must be in [0, 1], got %g", *minP)
		}
		g.MinP = *minP
	}
	if seed != nil {
		g.Seed = *seed
	}
	if len(g.Stop) > 16 {
		return nil, bad("stop", "invalid_value", "at most 16 stop sequences, got %d", len(g.Stop))
	}
	return p, nil
}
