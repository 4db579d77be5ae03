package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
)

// TestUnsupportedParameters: what the server does not implement is
// refused with 400 naming the parameter (OpenAI's shape), before the
// backend sees the request; the values that ask for nothing more are
// served. n=2, logprobs and tools were answered 200 with one plain choice.
func TestUnsupportedParameters(t *testing.T) {
	f := newFake("ok")
	_, ts, _ := newTestServer(t, f, Options{})
	chat := func(extra string) string {
		return `{"messages":[{"role":"user","content":"hi"}],"stream":true` + extra + `}`
	}
	completion := func(extra string) string { return `{"prompt":"hi","stream":true` + extra + `}` }
	for _, tc := range []struct {
		path, body string
		param      string // "" = served
	}{
		{"/v1/chat/completions", chat(`,"n":2`), "n"},
		{"/v1/chat/completions", chat(`,"n":"2"`), "n"},
		{"/v1/chat/completions", chat(`,"logprobs":true`), "logprobs"},
		{"/v1/chat/completions", chat(`,"top_logprobs":3`), "top_logprobs"},
		{"/v1/chat/completions", chat(`,"tools":[{"type":"function","function":{"name":"f"}}]`), "tools"},
		{"/v1/chat/completions", chat(`,"tool_choice":"auto"`), "tool_choice"},
		{"/v1/chat/completions", chat(`,"functions":[{"name":"f"}]`), "functions"},
		{"/v1/chat/completions", chat(`,"function_call":{"name":"f"}`), "function_call"},
		{"/v1/chat/completions", chat(`,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{}}}`), "response_format"},
		{"/v1/chat/completions", chat(`,"response_format":{"type":"json_object"}`), "response_format"},
		{"/v1/chat/completions", chat(`,"modalities":["text","audio"]`), "modalities"},
		{"/v1/chat/completions", chat(`,"audio":{"voice":"alloy","format":"wav"}`), "audio"},
		{"/v1/completions", completion(`,"n":3`), "n"},
		{"/v1/completions", completion(`,"best_of":2`), "best_of"},
		{"/v1/completions", completion(`,"logprobs":5`), "logprobs"},
		{"/v1/completions", completion(`,"echo":true`), "echo"},
		{"/v1/completions", completion(`,"suffix":" end"`), "suffix"},

		{"/v1/chat/completions", chat(``), ""},
		{"/v1/chat/completions", chat(`,"n":1,"logprobs":false,"top_logprobs":0,"tools":[],"tool_choice":"none"`), ""},
		{"/v1/chat/completions", chat(`,"n":null,"logprobs":null,"tools":null,"response_format":{"type":"text"},"modalities":["text"]`), ""},
		{"/v1/chat/completions", chat(`,"presence_penalty":0.5,"frequency_penalty":0.5,"logit_bias":{"1":5},"user":"u","parallel_tool_calls":false`), ""},
		{"/v1/completions", completion(`,"n":1,"best_of":1,"logprobs":0,"echo":false,"suffix":""`), ""},
	} {
		before := f.calls.Load()
		resp := post(t, t.Context(), ts.URL+tc.path, tc.body)
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if tc.param == "" {
			if resp.StatusCode != http.StatusOK || f.calls.Load() == before {
				t.Errorf("%s %s: got %d %s, want 200 served", tc.path, tc.body, resp.StatusCode, body)
			}
			continue
		}
		var eb api.ErrorBody
		json.Unmarshal([]byte(body), &eb)
		if resp.StatusCode != http.StatusBadRequest || eb.Error.Type != "invalid_request_error" ||
			eb.Error.Param == nil || *eb.Error.Param != tc.param || eb.Error.Code == nil || *eb.Error.Code != "unsupported_parameter" ||
			!strings.Contains(eb.Error.Message, tc.param) {
			t.Errorf("%s %s: got %d %s, want 400 invalid_request_error, param %s, code unsupported_parameter", tc.path, tc.body, resp.StatusCode, body, tc.param)
		}
		if f.calls.Load() != before {
			t.Errorf("%s %s: the backend saw a refused request", tc.path, tc.body)
		}
	}
}

// TestClipKeepsRunes: a long value is cut at a rune boundary.
func TestClipKeepsRunes(t *testing.T) {
	got := clip(json.RawMessage(`"` + strings.Repeat("é", 40) + `"`))
	if !strings.HasPrefix(got, `"é`) || !strings.Contains(got, "(82 bytes)") || strings.ContainsRune(got, '\uFFFD') || !strings.HasSuffix(strings.SplitN(got, "...", 2)[0], "é") {
		t.Errorf("clip: %q", got)
	}
}
