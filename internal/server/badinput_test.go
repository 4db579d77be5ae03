package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
)

func TestBadInput(t *testing.T) {
	f := newFake("never")
	f.tooLong = "TOO-LONG"
	_, ts, reg := newTestServer(t, f, Options{MaxBodyBytes: 1024, MaxTokensLimit: 100})
	msg := func(content string) string {
		return `{"messages":[{"role":"user","content":` + content + `}],"stream":true}`
	}
	for _, tc := range []struct {
		name        string
		method      string
		path        string
		contentType string
		header      []string
		body        string
		status      int
		code        string
		reachesGen  bool // the backend sees it (and rejects it itself)
	}{
		{name: "malformed json", body: `{"messages":[`, status: 400, code: "invalid_json"},
		{name: "trailing garbage", body: msg(`"hi"`) + `x`, status: 400, code: "invalid_json"},
		{name: "wrong type", body: `{"messages":"hi"}`, status: 400, code: "invalid_json"},
		{name: "unknown model", body: `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`, status: 404, code: "model_not_found"},
		{name: "prompt longer than context", body: msg(`"TOO-LONG"`), status: 400, code: "context_length_exceeded", reachesGen: true},
		{name: "max_tokens zero", body: `{"messages":[{"role":"user","content":"hi"}],"max_tokens":0}`, status: 400, code: "invalid_value"},
		{name: "max_tokens negative", body: `{"messages":[{"role":"user","content":"hi"}],"max_tokens":-5}`, status: 400, code: "invalid_value"},
		{name: "max_tokens over limit", body: `{"messages":[{"role":"user","content":"hi"}],"max_tokens":101}`, status: 400, code: "invalid_value"},
		{name: "max_completion_tokens over limit", body: `{"messages":[{"role":"user","content":"hi"}],"max_completion_tokens":1000}`, status: 400, code: "invalid_value"},
		{name: "temperature out of range", body: `{"messages":[{"role":"user","content":"hi"}],"temperature":3}`, status: 400, code: "invalid_value"},
		{name: "top_p zero", body: `{"messages":[{"role":"user","content":"hi"}],"top_p":0}`, status: 400, code: "invalid_value"},
		{name: "invalid utf-8", body: msg("\"caf\xc3\x28\""), status: 400, code: "invalid_utf8"},
		{name: "body over limit", body: msg(`"` + strings.Repeat("a", 2000) + `"`), status: 413, code: "body_too_large"},
		{name: "request id too long", header: []string{api.HeaderRequestID, strings.Repeat("x", 129)}, body: msg(`"hi"`), status: 400, code: "invalid_request_id"},
		{name: "request id not printable", header: []string{api.HeaderRequestID, "a\tb"}, body: msg(`"hi"`), status: 400, code: "invalid_request_id"},
		{name: "request id not ascii", header: []string{api.HeaderRequestID, "café"}, body: msg(`"hi"`), status: 400, code: "invalid_request_id"},
		{name: "missing messages", body: `{"model":"fake-1"}`, status: 400, code: "missing_messages"},
		{name: "empty messages", body: `{"messages":[]}`, status: 400, code: "missing_messages"},
		{name: "unknown role", body: `{"messages":[{"role":"wizard","content":"hi"}]}`, status: 400, code: "invalid_role"},
		{name: "wrong method", method: http.MethodGet, status: 405, code: "method_not_allowed"},
		{name: "wrong method on abort", method: http.MethodGet, path: "/v1/abort?request_id=x", status: 405, code: "method_not_allowed"},
		{name: "wrong content type", contentType: "application/x-www-form-urlencoded", body: msg(`"hi"`), status: 415, code: "unsupported_media_type"},
		{name: "completion prompt wrong type", path: "/v1/completions", body: `{"prompt":["a","b"]}`, status: 400, code: "invalid_json"},
		{name: "abort without id", path: "/v1/abort", status: 400, code: "invalid_request_id"},
		{name: "abort unknown id", path: "/v1/abort?request_id=nobody", status: 404, code: "request_not_found"},
		{name: "unknown route", path: "/v2/chat", status: 404, code: "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.calls.Load()
			method, path, ct := tc.method, tc.path, tc.contentType
			if method == "" {
				method = http.MethodPost
			}
			if path == "" {
				path = "/v1/chat/completions"
			}
			if ct == "" {
				ct = "application/json"
			}
			req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", ct)
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header[tc.header[i]] = []string{tc.header[i+1]}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if got, want := resp.StatusCode, tc.status; got != want {
				t.Errorf("status: got %d, want %d", got, want)
			}
			if got, want := resp.Header.Get("Content-Type"), "application/json"; got != want {
				t.Errorf("content type: got %q, want %q", got, want)
			}
			var eb api.ErrorBody
			if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
				t.Fatalf("error body: %v", err)
			}
			if eb.Error.Code == nil || *eb.Error.Code != tc.code {
				t.Errorf("error code: got %v, want %q (%+v)", eb.Error.Code, tc.code, eb.Error)
			}
			if eb.Error.Message == "" || eb.Error.Type == "" {
				t.Errorf("error body incomplete: %+v", eb.Error)
			}
			calls := f.calls.Load() - before
			if got, want := calls, map[bool]int64{false: 0, true: 1}[tc.reachesGen]; got != want {
				t.Errorf("backend calls: got %d, want %d", got, want)
			}
		})
	}
	if got := f.emitted.Load(); got != 0 {
		t.Errorf("backend emitted %d tokens for bad input, want 0", got)
	}
	if got := metricValue(t, reg, "tokenpulse_server_tokens_total"); got != 0 {
		t.Errorf("tokens_total: got %v, want 0", got)
	}
}

func TestAuth(t *testing.T) {
	_, ts, _ := newTestServer(t, newFake("a"), Options{APIKey: "secret"})
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"none", "", 401},
		{"wrong", "Bearer nope", 401},
		{"prefix of key", "Bearer secre", 401},
		{"not bearer", "Basic secret", 401},
		{"right", "Bearer secret", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody, "Authorization", tc.auth)
			readAll(t, resp.Body)
			resp.Body.Close()
			if got := resp.StatusCode; got != tc.want {
				t.Errorf("status: got %d, want %d", got, tc.want)
			}
		})
	}
	// Health and metrics stay open for probes.
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/metrics with a key set: got %d, want 200", resp.StatusCode)
	}
}

func TestDuplicateRequestID(t *testing.T) {
	f := newFake("a", "b")
	f.gate = make(chan struct{})
	_, ts, _ := newTestServer(t, f, Options{Parallel: 2})
	first, br := streamUntil(t, t.Context(), ts.URL, f, "same", 1)
	defer first.Body.Close()
	dup := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody, api.HeaderRequestID, "same")
	readAll(t, dup.Body)
	dup.Body.Close()
	if got, want := dup.StatusCode, http.StatusConflict; got != want {
		t.Errorf("duplicate id: got %d, want %d", got, want)
	}
	f.gate <- struct{}{}
	readAll(t, br)
}

// FuzzCompletionBody sends arbitrary bodies: the answer is a stream (200)
// or an OpenAI-shaped JSON error (4xx), never a crash or a 5xx.
func FuzzCompletionBody(f *testing.F) {
	for _, seed := range []string{
		chatBody,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"max_tokens":3}`,
		`{"messages":[{"role":"user","content":null}],"stop":"x","seed":-1}`,
		`{"messages":[`, `[]`, `null`, "\xff", `{"max_tokens":1e99}`,
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	b := newFake("a", "b")
	s, err := New(b, Options{MaxBodyBytes: 4096})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string, chat bool) {
		path := "/v1/completions"
		if chat {
			path = "/v1/chat/completions"
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch {
		case rec.Code == 200:
		case rec.Code >= 400 && rec.Code < 500:
			var eb api.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error.Message == "" {
				t.Fatalf("%d with body %q", rec.Code, rec.Body.String())
			}
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
	})
}
