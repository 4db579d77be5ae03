// Package api holds the wire types of the OpenAI-compatible streaming API
// that tokenpulse speaks as a client (bench) and as a server (serve, mock,
// gateway), and tokenpulse's own extensions to it.
//
// Only the fields tokenpulse reads or writes are modelled; unknown fields
// are ignored when decoding. The extension object travels in a field named
// "tokenpulse" on each chunk, which OpenAI clients ignore.
//
// The types are plain data: safe to share once built, not to mutate
// concurrently.
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Message is one chat message. Content may arrive as a string or as an
// array of content parts; only text parts are kept.
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content is the text of a message. It decodes from a JSON string or from
// an array of parts ({"type":"text","text":"..."}) and encodes as a string.
type Content string

// UnmarshalJSON implements json.Unmarshaler.
func (c *Content) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = Content(s)
		return nil
	}
	if string(b) == "null" {
		*c = ""
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return errors.New("content must be a string or an array of text parts")
	}
	var sb strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			sb.WriteString(p.Text)
		}
	}
	*c = Content(sb.String())
	return nil
}

// StreamOptions asks for extras in a stream.
type StreamOptions struct {
	// IncludeUsage asks for a final chunk with usage and empty choices.
	IncludeUsage bool `json:"include_usage"`
}

// ChatRequest is the body of POST /v1/chat/completions.
type ChatRequest struct {
	Model               string         `json:"model"`
	Messages            []Message      `json:"messages"`
	Stream              bool           `json:"stream"`
	StreamOptions       *StreamOptions `json:"stream_options,omitempty"`
	MaxTokens           *int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int           `json:"max_completion_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	TopP                *float64       `json:"top_p,omitempty"`
	TopK                *int           `json:"top_k,omitempty"`
	MinP                *float64       `json:"min_p,omitempty"`
	Seed                *int64         `json:"seed,omitempty"`
	Stop                Stop           `json:"stop,omitempty"`
	// IgnoreEOS (llama.cpp, vLLM; not OpenAI) asks the server to go on
	// past the end-of-sequence token, up to max_tokens.
	IgnoreEOS *bool `json:"ignore_eos,omitempty"`
	// CachePrompt (llama.cpp; not OpenAI), when false, asks the server to
	// run every prompt token rather than reuse the keys and values of a
	// prefix its cache already holds. Absent means true, as in
	// llama-server.
	CachePrompt *bool  `json:"cache_prompt,omitempty"`
	User        string `json:"user,omitempty"`
}

// CompletionRequest is the body of POST /v1/completions.
type CompletionRequest struct {
	Model         string         `json:"model"`
	Prompt        Prompt         `json:"prompt"`
	Stream        bool           `json:"stream"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	MaxTokens     *int           `json:"max_tokens,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	TopK          *int           `json:"top_k,omitempty"`
	MinP          *float64       `json:"min_p,omitempty"`
	Seed          *int64         `json:"seed,omitempty"`
	Stop          Stop           `json:"stop,omitempty"`
	IgnoreEOS     *bool          `json:"ignore_eos,omitempty"`
	CachePrompt   *bool          `json:"cache_prompt,omitempty"`
}

// RequestOptions are what a client asks of the server's sampling with
// every request, beyond the prompt and its output limit. A nil or empty
// field is not sent, which leaves the server's own default. Its JSON is
// the record of what was sent (a run file's config.request): the fields
// under their names in the request body, and ExtraBody as given.
//
// TopK and IgnoreEOS are extensions of the OpenAI API that llama.cpp's
// llama-server and vLLM accept; OpenAI's own API rejects or ignores them.
type RequestOptions struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	TopK        *int     `json:"top_k,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	IgnoreEOS   *bool    `json:"ignore_eos,omitempty"`
	// ExtraBody, when set, is a JSON object merged into the request body
	// at its top level: its keys replace the body's own of the same name.
	// It may not hold "stream" or "stream_options", which the client's
	// reading of the stream depends on.
	ExtraBody json.RawMessage `json:"extra_body,omitempty"`
}

// IsZero reports whether o asks for nothing.
func (o RequestOptions) IsZero() bool {
	return o.Temperature == nil && o.TopP == nil && o.TopK == nil && o.Seed == nil &&
		len(o.Stop) == 0 && o.IgnoreEOS == nil && len(o.ExtraBody) == 0
}

// ReservedExtraKeys are the keys [RequestOptions.ExtraBody] may not hold:
// the stream and its usage chunk are how the client measures.
var ReservedExtraKeys = []string{"stream", "stream_options"}

// The bounds of an extra body ([RequestOptions.ExtraBody]): it is sent
// with every request and recorded in the run file, so a large or deeply
// nested one would swell both (10⁴ levels in 20 KB gave a 200 MB run
// file, which common JSON readers refuse). Sampling options and vendor
// switches need neither.
const (
	// MaxExtraBodyBytes is its largest size: 64 KiB.
	MaxExtraBodyBytes = 64 << 10
	// MaxExtraBodyDepth is its deepest nesting of objects and arrays,
	// the outer object being level 1: 64.
	MaxExtraBodyDepth = 64
)

// ExtraObject decodes an extra body: a JSON object of at most
// [MaxExtraBodyBytes] and [MaxExtraBodyDepth] levels, whose keys are
// returned with their values, none of them one of [ReservedExtraKeys].
func ExtraObject(b []byte) (map[string]json.RawMessage, error) {
	if len(b) > MaxExtraBodyBytes {
		return nil, fmt.Errorf("%d bytes: at most %d KiB (api.MaxExtraBodyBytes)", len(b), MaxExtraBodyBytes>>10)
	}
	if d := jsonDepth(b); d > MaxExtraBodyDepth {
		return nil, fmt.Errorf("nested %d levels or more: at most %d (api.MaxExtraBodyDepth)", d, MaxExtraBodyDepth)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if m == nil {
		return nil, errors.New("not a JSON object: null")
	}
	for _, k := range ReservedExtraKeys {
		if _, ok := m[k]; ok {
			return nil, fmt.Errorf("%q may not be set: tokenpulse sets it, and measures each stream by it", k)
		}
	}
	return m, nil
}

// jsonDepth returns the deepest nesting of objects and arrays in the JSON
// text b, brackets inside strings left out; it stops counting one past
// MaxExtraBodyDepth.
func jsonDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > deepest {
				if deepest = depth; deepest > MaxExtraBodyDepth {
					return deepest
				}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// Prompt is a completion prompt: a JSON string or an array holding exactly
// one string.
type Prompt string

// UnmarshalJSON implements json.Unmarshaler.
func (p *Prompt) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*p = Prompt(s)
		return nil
	}
	var arr []string
	if err := json.Unmarshal(b, &arr); err != nil || len(arr) != 1 {
		return errors.New("prompt must be a string or an array of one string")
	}
	*p = Prompt(arr[0])
	return nil
}

// Stop is a list of stop sequences; it decodes from a string or an array.
type Stop []string

// UnmarshalJSON implements json.Unmarshaler.
func (s *Stop) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = Stop{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("stop must be a string or an array of strings")
	}
	*s = many
	return nil
}

// Chunk is one streamed event's JSON: a chat.completion.chunk or a
// text_completion chunk. Chat chunks fill Choices[i].Delta, completion
// chunks Choices[i].Text.
type Chunk struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	// Usage is set on the final chunk when stream_options.include_usage
	// was asked (vLLM and OpenAI send it with empty Choices).
	Usage *Usage `json:"usage,omitempty"`
	// Tokenpulse carries tokenpulse's per-event extension; other servers
	// do not send it.
	Tokenpulse *Extension `json:"tokenpulse,omitempty"`
	// Timings is llama.cpp's per-response timing object, kept when present.
	Timings json.RawMessage `json:"timings,omitempty"`
}

// Choice is one choice of a chunk (tokenpulse always streams one).
type Choice struct {
	Index        int     `json:"index"`
	Delta        *Delta  `json:"delta,omitempty"`
	Text         *string `json:"text,omitempty"`
	FinishReason *string `json:"finish_reason"`
}

// Delta is the change a chat chunk carries.
type Delta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content,omitempty"`
	// ReasoningContent (DeepSeek, vLLM) and Reasoning (Ollama, OpenRouter)
	// carry a reasoning model's thinking; tokenpulse counts them as tokens
	// and flags them.
	ReasoningContent string `json:"reasoning_content,omitempty"`
	Reasoning        string `json:"reasoning,omitempty"`
}

// Usage is the token accounting of a response.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// PromptTokensDetails, in OpenAI's shape, says how many of the prompt
	// tokens were served from the server's prompt cache.
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokensDetails is the breakdown of a usage's prompt tokens.
type PromptTokensDetails struct {
	// CachedTokens is how many of the prompt's first tokens were not run
	// again: their keys and values were already in the server's cache.
	CachedTokens int `json:"cached_tokens"`
}

// Extension is tokenpulse's per-event server timing, in the "tokenpulse"
// field of a chunk.
type Extension struct {
	// ServerNS is when the event's token left the engine, as Unix
	// nanoseconds of the server's wall clock.
	ServerNS int64 `json:"server_ns,omitempty"`
	// OffsetNS is the same instant as a monotonic offset from when the
	// server received the request.
	OffsetNS int64 `json:"offset_ns,omitempty"`
	// Index is the 0-based index of the first output token in this event.
	Index int `json:"index"`
	// Tokens is how many output tokens the event carries (1 on the stream
	// contract; more from a batching mock).
	Tokens int `json:"tokens,omitempty"`
	// Timings is set on the final event: the server's split of the request.
	Timings *Timings `json:"timings,omitempty"`
}

// Timings is the server's own split of a request, sent on the final event
// of a stream and in non-streamed responses.
type Timings struct {
	QueueNS      int64 `json:"queue_ns"`
	PrefillNS    int64 `json:"prefill_ns"`
	DecodeNS     int64 `json:"decode_ns"`
	PromptTokens int   `json:"prompt_tokens"`
	OutputTokens int   `json:"output_tokens"`
	// CachedTokens is how many of PromptTokens came from the prompt cache
	// (PrefillNS covers only the others).
	CachedTokens int `json:"cached_tokens,omitempty"`
}

// LlamaTimings is llama.cpp's llama-server account of a response: the
// "timings" object of its final stream chunk (and of every chunk when the
// request set timings_per_token), in milliseconds. As llama-server
// (c392e50) computes it:
//
//   - PromptMS runs from the start of prompt processing to the sampling of
//     the first output token, so the first token's time is in PromptMS,
//     not in PredictedMS; PromptN counts the prompt tokens processed, less
//     those reused from the slot's cache (it can be 0, and the per-token
//     figures then come as null).
//   - PredictedMS runs from the first output token's sampling to the end
//     of generation: it covers the decoding of the PredictedN − 1 tokens
//     after the first, although PredictedN counts all of them, and
//     PredictedPerTokenMS is PredictedMS ÷ PredictedN.
type LlamaTimings struct {
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
}

// Completion is a non-streamed response (chat or text completion).
type Completion struct {
	ID         string             `json:"id"`
	Object     string             `json:"object"`
	Created    int64              `json:"created"`
	Model      string             `json:"model"`
	Choices    []CompletionChoice `json:"choices"`
	Usage      Usage              `json:"usage"`
	Tokenpulse *Extension         `json:"tokenpulse,omitempty"`
}

// CompletionChoice is one choice of a non-streamed response.
type CompletionChoice struct {
	Index        int      `json:"index"`
	Message      *Message `json:"message,omitempty"`
	Text         *string  `json:"text,omitempty"`
	FinishReason string   `json:"finish_reason"`
}

// ErrorBody is the OpenAI error shape: {"error": {...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail describes an error.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Model is one entry of GET /v1/models.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// ModelList is the body of GET /v1/models.
type ModelList struct {
	Object string  `json:"object"`
	Data   []Model `json:"data"`
}

// AbortResponse answers POST /v1/abort.
type AbortResponse struct {
	RequestID string `json:"request_id"`
	// Aborted is true when a running or queued request was stopped.
	Aborted bool `json:"aborted"`
	// TokensAfterAbort counts tokens the engine produced after the abort
	// arrived (the goal is 0).
	TokensAfterAbort int `json:"tokens_after_abort"`
	// OutputTokens is how many tokens the request had produced in all.
	OutputTokens int `json:"output_tokens"`
	// StopNS is how long the generation took to stop after the abort
	// arrived, in nanoseconds.
	StopNS int64 `json:"stop_ns"`
}

// Health is the body of GET /health.
type Health struct {
	// Status is "warming" (HTTP 503), "ready" (HTTP 200) or "broken"
	// (HTTP 503: the backend can serve no further request; Reason says
	// why).
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Model  string `json:"model,omitempty"`
	// Backend says what produces the tokens: "embedded", "gateway" or
	// "mock" (tokenpulse's extension; bench records it in the run file).
	Backend string  `json:"backend,omitempty"`
	Warmup  *Warmup `json:"warmup,omitempty"`
}

// Warmup is the cold-start breakdown of the server's warm-up, in
// nanoseconds.
type Warmup struct {
	LoadNS         int64 `json:"load_ns"`
	PageInNS       int64 `json:"page_in_ns"`
	KVInitNS       int64 `json:"kv_init_ns"`
	FirstForwardNS int64 `json:"first_forward_ns"`
	TotalNS        int64 `json:"total_ns"`
}

// HeaderRequestID is the request id header, honoured and echoed.
const HeaderRequestID = "X-Request-ID"
