// Package gateway is a [server.Backend] in front of another
// OpenAI-compatible runtime (llama.cpp's llama-server, Ollama, vLLM, or
// another tokenpulse), so that `tokenpulse serve --upstream URL` serves the
// stream contract (ids, one token per event, server times, real abort) for
// a runtime that does not.
//
// Each request is forwarded streamed. Every upstream event that carries
// output becomes pieces of one token each, stamped with the gateway's
// clock as they leave it. When ctx ends (an abort or a client that left)
// the upstream request's context is cancelled, which closes its connection:
// llama.cpp, vLLM and tokenpulse stop generating for a client that goes
// away.
//
// How many tokens an upstream event holds is read, in order, from
// tokenpulse's own "tokenpulse.tokens" field, or from the growth of
// llama.cpp's per-chunk "timings.predicted_n" when the upstream sends it.
// An event whose count is known to be k > 1 is split into k pieces at rune
// boundaries (the split is even, not the upstream tokenizer's, since the
// boundaries are not sent). When the count is not known, an event is one
// token; if the upstream's final usage then reports more tokens than
// events, the upstream batched tokens the gateway could not see apart: the
// usage the client gets carries the upstream's count, and
// [server.GenResult].Upstream keeps the upstream's usage.
//
// Example:
//
//	g, _ := gateway.New(gateway.Options{URL: "http://127.0.0.1:8081"})
//	s, _ := server.New(g, server.Options{})
//	_ = s.WarmUp(ctx)
//	_ = s.Serve(ctx, ln)
//
// A Gateway is safe for concurrent use.
package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/origin"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/sse"
)

// Options configures a [Gateway].
type Options struct {
	// URL is the upstream's base URL, with or without the trailing /v1.
	URL string
	// APIKey, when set, is sent to the upstream as a bearer token.
	APIKey string
	// Model is the model to announce and to use when a request names
	// none; "" takes the upstream's first listed model.
	Model string
	// Client sends the upstream requests (nil = a client of the gateway's
	// own, without an overall timeout: streams last as long as they
	// last).
	Client *http.Client
	// HeaderTimeout bounds the wait for the upstream's response headers
	// on the gateway's own client (0 = no bound; unused with Client). A
	// request that runs past it fails with 504.
	HeaderTimeout time.Duration
}

// Gateway forwards requests to an upstream runtime. Build it with [New].
type Gateway struct {
	base   string
	key    string
	model  string
	client *http.Client

	mu     sync.Mutex
	models []string
}

// New returns a gateway to the upstream at o.URL. It does no I/O: the
// upstream is first reached by Warmup or the first request.
func New(o Options) (*Gateway, error) {
	base := strings.TrimRight(strings.TrimSpace(o.URL), "/")
	base = strings.TrimSuffix(base, "/v1")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("gateway: upstream URL %q must start with http:// or https://", o.URL)
	}
	c := o.Client
	if c == nil {
		c = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: o.HeaderTimeout,
		}}
	}
	// The upstream's key and the prompt never follow a redirect (package
	// origin; none within the upstream's origin either): it is the
	// upstream's answer, a 502 for the client.
	cc := *c
	cc.CheckRedirect = origin.CheckRedirect(nil)
	return &Gateway{base: base, key: o.APIKey, model: o.Model, client: &cc}, nil
}

// Models returns o.Model first (when set), then the models the upstream
// listed at warm-up. It is empty when neither is known; the server then
// passes any model name through.
func (g *Gateway) Models() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	if g.model != "" {
		out = append(out, g.model)
	}
	for _, m := range g.models {
		if m != g.model {
			out = append(out, m)
		}
	}
	return out
}

// Warmup lists the upstream's models and sends it one short request, so
// the upstream's own cold start is behind us before the server is ready.
// FirstForwardNS is that request's duration.
func (g *Gateway) Warmup(ctx context.Context) (*api.Warmup, error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+"/v1/models", nil)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.auth(req)
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("gateway: listing upstream models: %w", err)
	}
	var list api.ModelList
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil {
		return nil, fmt.Errorf("gateway: listing upstream models: status %d: %v", resp.StatusCode, err)
	}
	g.mu.Lock()
	g.models = g.models[:0]
	for _, m := range list.Data {
		g.models = append(g.models, m.ID)
	}
	g.mu.Unlock()
	load := time.Since(start)

	first := time.Now()
	gr := &server.GenRequest{ID: "warmup-" + server.NewRequestID(), Model: firstOr(g.Models(), ""), Chat: true,
		Messages: []api.Message{{Role: "user", Content: "Hello"}}, MaxTokens: 1, Temperature: 0, TopP: 1}
	if _, err := g.Generate(ctx, gr, func(server.Piece) error { return nil }); err != nil {
		return nil, fmt.Errorf("gateway: warm-up request: %w", err)
	}
	return &api.Warmup{LoadNS: int64(load), FirstForwardNS: int64(time.Since(first)), TotalNS: int64(time.Since(start))}, nil
}

func firstOr(ss []string, def string) string {
	if len(ss) > 0 {
		return ss[0]
	}
	return def
}

func (g *Gateway) auth(req *http.Request) {
	if g.key != "" {
		req.Header.Set("Authorization", "Bearer "+g.key)
	}
}

// body builds the upstream request body.
func body(req *server.GenRequest) ([]byte, error) {
	m := map[string]any{
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     req.MaxTokens,
		"temperature":    req.Temperature,
		"top_p":          req.TopP,
	}
	if req.Model != "" {
		m["model"] = req.Model
	}
	if req.Chat {
		m["messages"] = req.Messages
	} else {
		m["prompt"] = req.Prompt
	}
	if req.TopK > 0 {
		m["top_k"] = req.TopK
	}
	if req.MinP > 0 {
		m["min_p"] = req.MinP
	}
	if req.Seed != 0 {
		m["seed"] = req.Seed
	}
	if len(req.Stop) > 0 {
		m["stop"] = req.Stop
	}
	if req.IgnoreEOS {
		m["ignore_eos"] = true
	}
	if req.NoPromptCache {
		m["cache_prompt"] = false
	}
	return json.Marshal(m)
}

// upstreamChunk is a chunk as upstreams send it, with the error some send
// in the middle of a stream.
type upstreamChunk struct {
	api.Chunk
	Error *api.ErrorDetail `json:"error,omitempty"`
}

// llamaTimings is the part of llama.cpp's per-chunk timings read here.
type llamaTimings struct {
	PredictedN *int `json:"predicted_n"`
}

// Generate forwards req to the upstream and emits one piece per upstream
// token, at most req.MaxTokens of them (then it closes the upstream
// request and finishes with "length"). It checks ctx before every piece;
// cancelling ctx closes the upstream request. An upstream that fails
// (unreachable, a 5xx, a cut or malformed stream) fails the request with
// a *server.RequestError of status 502, or 504 when it timed out.
func (g *Gateway) Generate(ctx context.Context, req *server.GenRequest, emit func(server.Piece) error) (server.GenResult, error) {
	var res server.GenResult
	payload, err := body(req)
	if err != nil {
		return res, fmt.Errorf("gateway: %w", err)
	}
	path := "/v1/completions"
	if req.Chat {
		path = "/v1/chat/completions"
	}
	start := time.Now()
	resp, err := g.post(ctx, g.base+path, req.ID, payload)
	if err != nil {
		if ctx.Err() != nil {
			return res, context.Cause(ctx)
		}
		return res, upstreamFailed(err, "gateway: upstream: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return res, upstreamError(resp)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return res, upstreamFailed(nil, "gateway: upstream answered %q, not an event stream", resp.Header.Get("Content-Type"))
	}

	dec := sse.NewDecoder(resp.Body)
	var (
		count       int
		predicted   int // llama.cpp's predicted_n so far
		first, last time.Time
		finished    bool
		upTimings   *api.Timings
	)
read:
	for {
		ev, err := dec.Next()
		if err != nil {
			if ctx.Err() != nil {
				return res, context.Cause(ctx)
			}
			if errors.Is(err, io.EOF) && finished {
				break // some upstreams end after the finish reason without [DONE]
			}
			return res, upstreamFailed(err, "gateway: upstream stream cut after %d tokens: %v", count, err)
		}
		if ev.Data == "[DONE]" {
			break
		}
		var c upstreamChunk
		if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
			return res, upstreamFailed(nil, "gateway: upstream event: %v", err)
		}
		if c.Error != nil {
			return res, upstreamFailed(nil, "gateway: upstream error mid-stream: %s", c.Error.Message)
		}
		if c.Usage != nil {
			u := *c.Usage
			res.Upstream = &u
		}
		if c.Tokenpulse != nil && c.Tokenpulse.Timings != nil {
			upTimings = c.Tokenpulse.Timings
		}
		n := 0 // tokens in this event; 0 = not said
		if c.Tokenpulse != nil && c.Tokenpulse.Tokens > 0 {
			n = c.Tokenpulse.Tokens
		} else if len(c.Timings) > 0 {
			var lt llamaTimings
			if json.Unmarshal(c.Timings, &lt) == nil && lt.PredictedN != nil {
				n = max(*lt.PredictedN-predicted, 0)
				predicted = *lt.PredictedN
			}
		}
		for _, ch := range c.Choices {
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				res.FinishReason = *ch.FinishReason
				finished = true
			}
			text, reasoning := choiceText(ch)
			k := n
			if k == 0 && text == "" {
				continue // a role-only or finish-only chunk: not a token
			}
			if k == 0 {
				k = 1
			}
			for _, part := range split(text, k) {
				if err := ctx.Err(); err != nil {
					return res, context.Cause(ctx)
				}
				if req.MaxTokens > 0 && count >= req.MaxTokens {
					// The upstream ignored max_tokens (or counts
					// differently): stop here; closing the body ends
					// the upstream request.
					res.FinishReason = "length"
					res.Upstream = nil
					break read
				}
				at := time.Now()
				if count == 0 {
					first = at
				}
				last = at
				count++
				if err := emit(server.Piece{Text: part, Tokens: 1, Reasoning: reasoning, At: at}); err != nil {
					return res, err
				}
			}
		}
	}
	res.OutputTokens = count
	if u := res.Upstream; u != nil {
		res.PromptTokens = u.PromptTokens
		res.OutputTokens = max(count, u.CompletionTokens)
	}
	switch {
	case upTimings != nil:
		res.Prefill, res.Decode = time.Duration(upTimings.PrefillNS), time.Duration(upTimings.DecodeNS)
		if res.PromptTokens == 0 {
			res.PromptTokens = upTimings.PromptTokens
		}
	case count > 0:
		res.Prefill, res.Decode = first.Sub(start), last.Sub(first)
	}
	if res.FinishReason == "" {
		res.FinishReason = "stop"
	}
	return res, nil
}

// post sends the upstream request. A request that fails on a reused
// keep-alive connection before any response byte was never processed
// (llama.cpp closes idle connections without saying so): it is sent once
// more on a fresh connection.
func (g *Gateway) post(ctx context.Context, url, id string, payload []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, url, bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(api.HeaderRequestID, id)
		g.auth(req)
		resp, err := g.client.Do(req)
		if err != nil && reused && attempt == 0 && ctx.Err() == nil {
			continue
		}
		return resp, err
	}
}

// upstreamError turns an upstream's error answer into a RequestError (4xx,
// so that bad input stays the client's) or an error (5xx).
func upstreamError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := strings.TrimSpace(string(raw))
	var eb api.ErrorBody
	var code, param string
	if json.Unmarshal(raw, &eb) == nil && eb.Error.Message != "" {
		msg = eb.Error.Message
		if eb.Error.Code != nil {
			code = *eb.Error.Code
		}
		if eb.Error.Param != nil {
			param = *eb.Error.Param
		}
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		typ := eb.Error.Type
		if typ == "" {
			typ = "invalid_request_error"
		}
		return &server.RequestError{Status: resp.StatusCode, Type: typ, Code: code, Param: param, Message: "upstream: " + msg}
	}
	status := http.StatusBadGateway
	if resp.StatusCode == http.StatusGatewayTimeout {
		status = http.StatusGatewayTimeout
	}
	return serverError(status, fmt.Sprintf("gateway: upstream answered %d: %s", resp.StatusCode, msg))
}

// upstreamFailed is the error of a request the upstream failed: 504 when
// err is a timeout, 502 otherwise.
func upstreamFailed(err error, format string, args ...any) error {
	status := http.StatusBadGateway
	var ne net.Error
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())) {
		status = http.StatusGatewayTimeout
	}
	return serverError(status, fmt.Sprintf(format, args...))
}

func serverError(status int, msg string) error {
	code := "upstream_error"
	if status == http.StatusGatewayTimeout {
		code = "upstream_timeout"
	}
	return &server.RequestError{Status: status, Type: "server_error", Code: code, Message: msg}
}

// choiceText returns a choice's output text and whether it is reasoning.
func choiceText(ch api.Choice) (string, bool) {
	if ch.Text != nil {
		return *ch.Text, false
	}
	if d := ch.Delta; d != nil {
		switch {
		case d.Content != "":
			return d.Content, false
		case d.ReasoningContent != "":
			return d.ReasoningContent, true
		case d.Reasoning != "":
			return d.Reasoning, true
		}
	}
	return "", false
}

// split cuts text into n parts at rune boundaries, as evenly as the runes
// allow; when text has fewer runes than n, the last parts are empty.
func split(text string, n int) []string {
	if n <= 1 {
		return []string{text}
	}
	runes := utf8.RuneCountInString(text)
	parts := make([]string, 0, n)
	rest := text
	for i := range n {
		take := runes / n
		if i < runes%n {
			take++
		}
		cut := 0
		for range take {
			_, size := utf8.DecodeRuneInString(rest[cut:])
			cut += size
		}
		parts = append(parts, rest[:cut])
		rest = rest[cut:]
	}
	return parts
}

var _ server.Backend = (*Gateway)(nil)

// Kind reports the backend's kind, "gateway", on the server's /health.
func (b *Gateway) Kind() string { return "gateway" }
