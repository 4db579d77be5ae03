package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// unsupportedFields are the request fields this server does not implement
// and must not ignore, since the client would take a plain answer for
// what it asked: several choices, log probabilities, tool calls, JSON
// output, an echoed prompt. Each stays raw, so that a value of any type is
// checked (a string "2" for n is refused too, not taken as absent).
//
// The gateway (serve --upstream) refuses them as well: it builds the
// upstream request from what it implements and re-streams one choice of
// text one token per event, so none of them would reach the upstream or
// come back from it.
type unsupportedFields struct {
	N              json.RawMessage `json:"n"`
	BestOf         json.RawMessage `json:"best_of"`
	Logprobs       json.RawMessage `json:"logprobs"`
	TopLogprobs    json.RawMessage `json:"top_logprobs"`
	Echo           json.RawMessage `json:"echo"`
	Suffix         json.RawMessage `json:"suffix"`
	Tools          json.RawMessage `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	Functions      json.RawMessage `json:"functions"`
	FunctionCall   json.RawMessage `json:"function_call"`
	ResponseFormat json.RawMessage `json:"response_format"`
	Modalities     json.RawMessage `json:"modalities"`
	Audio          json.RawMessage `json:"audio"`
}

// unsupportedRule accepts a field's value when it asks for nothing this
// server lacks: null or absent, or one of ok (JSON values).
type unsupportedRule struct {
	param string
	value func(*unsupportedFields) json.RawMessage
	ok    []string
	why   string
}

// unsupportedRules are checked in this order; the first value refused is
// the one answered.
var unsupportedRules = []unsupportedRule{
	{"n", func(f *unsupportedFields) json.RawMessage { return f.N }, []string{`1`}, "this server returns one choice per request"},
	{"best_of", func(f *unsupportedFields) json.RawMessage { return f.BestOf }, []string{`1`}, "this server generates one completion per request"},
	{"logprobs", func(f *unsupportedFields) json.RawMessage { return f.Logprobs }, []string{`false`, `0`}, "this server returns no log probabilities"},
	{"top_logprobs", func(f *unsupportedFields) json.RawMessage { return f.TopLogprobs }, []string{`0`}, "this server returns no log probabilities"},
	{"echo", func(f *unsupportedFields) json.RawMessage { return f.Echo }, []string{`false`}, "this server does not echo the prompt"},
	{"suffix", func(f *unsupportedFields) json.RawMessage { return f.Suffix }, []string{`""`}, "this server does not insert text (no suffix)"},
	{"tools", func(f *unsupportedFields) json.RawMessage { return f.Tools }, []string{`[]`}, "this server does not call tools"},
	{"tool_choice", func(f *unsupportedFields) json.RawMessage { return f.ToolChoice }, []string{`"none"`}, "this server does not call tools"},
	{"functions", func(f *unsupportedFields) json.RawMessage { return f.Functions }, []string{`[]`}, "this server does not call functions"},
	{"function_call", func(f *unsupportedFields) json.RawMessage { return f.FunctionCall }, []string{`"none"`}, "this server does not call functions"},
	{"response_format", func(f *unsupportedFields) json.RawMessage { return f.ResponseFormat }, []string{`{"type":"text"}`}, "this server does not constrain its output to JSON"},
	{"modalities", func(f *unsupportedFields) json.RawMessage { return f.Modalities }, []string{`["text"]`}, "this server answers text only"},
	{"audio", func(f *unsupportedFields) json.RawMessage { return f.Audio }, nil, "this server answers text only"},
}

// checkUnsupported refuses a request body that asks for something of
// unsupportedFields: 400, type invalid_request_error, code
// unsupported_parameter, the parameter named, as OpenAI answers a
// parameter a model does not support.
func checkUnsupported(body []byte) *badRequest {
	var f unsupportedFields
	if err := json.Unmarshal(body, &f); err != nil {
		return bad("", "invalid_json", "malformed JSON: %v", err)
	}
	for _, r := range unsupportedRules {
		raw := r.value(&f)
		if accepted(raw, r.ok) {
			continue
		}
		allowed := "omit it"
		if len(r.ok) > 0 {
			allowed = "omit it or send " + strings.Join(r.ok, " or ")
		}
		return bad(r.param, "unsupported_parameter", "unsupported parameter %s = %s: %s; %s", r.param, clip(raw), r.why, allowed)
	}
	return nil
}

// accepted reports whether raw is absent, null, or equal as JSON to one of
// ok.
func accepted(raw json.RawMessage, ok []string) bool {
	if len(raw) == 0 {
		return true
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	if v == nil {
		return true
	}
	for _, o := range ok {
		var w any
		if json.Unmarshal([]byte(o), &w) == nil && reflect.DeepEqual(v, w) {
			return true
		}
	}
	return false
}

// clip shortens a value for an error message, at a rune boundary.
func clip(raw json.RawMessage) string {
	const max = 60
	if len(raw) <= max {
		return string(raw)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(raw[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", raw[:cut], len(raw))
}
