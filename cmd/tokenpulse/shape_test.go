package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// bodyCapture is a scripted server that keeps the JSON body of every
// completion request and answers with a short stream.
type bodyCapture struct {
	mu     sync.Mutex
	paths  []string
	bodies []map[string]json.RawMessage
}

func (c *bodyCapture) start(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chat := r.URL.Path == "/v1/chat/completions"
		if r.Method != http.MethodPost || (!chat && r.URL.Path != "/v1/completions") {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("request body is not a JSON object: %v\n%s", err, b)
		}
		c.mu.Lock()
		c.paths = append(c.paths, r.URL.Path)
		c.bodies = append(c.bodies, m)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for i, s := range []string{"Hello", " there"} {
			finish := "null"
			if i == 1 {
				finish = `"stop"`
			}
			if chat {
				fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", s, finish)
			} else {
				fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":%q,\"finish_reason\":%s}]}\n\n", s, finish)
			}
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (c *bodyCapture) snapshot() ([]string, []map[string]json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.paths...), append([]map[string]json.RawMessage(nil), c.bodies...)
}

// shapeBench runs bench against the capture with the extra args and
// returns the run file and every body the server received.
func shapeBench(t *testing.T, extra ...string) (*runfile.Run, []string, []map[string]json.RawMessage) {
	t.Helper()
	var c bodyCapture
	url := c.start(t)
	out := t.TempDir()
	args := append([]string{"bench", "--url", url, "--model-name", "m", "--suite", writeBenchSuite(t, "30s"),
		"-n", "3", "--warmup", "1", "--cold", "--out", out, "--no-history", "-q"}, extra...)
	text, code := cliRun(t, args...)
	if code != exitOK {
		t.Fatalf("%q: exit %d:\n%s", extra, code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	paths, bodies := c.snapshot()
	if len(bodies) != 5 {
		t.Fatalf("the server got %d requests, want 5 (cold, warm-up, 3 measured)", len(bodies))
	}
	return run, paths, bodies
}

// jsonEq reports whether raw is the JSON of want.
func jsonEq(t *testing.T, raw json.RawMessage, want any) bool {
	t.Helper()
	var got, w any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, _ := json.Marshal(want)
	json.Unmarshal(b, &w)
	return reflect.DeepEqual(got, w)
}

var shapeKeys = []string{"temperature", "top_p", "top_k", "seed", "stop", "ignore_eos"}

func TestBenchShapeFlagsSent(t *testing.T) {
	for _, apiName := range []string{"chat", "completions"} {
		t.Run(apiName, func(t *testing.T) {
			run, paths, bodies := shapeBench(t, "--api", apiName,
				"--temperature", "0.25", "--top-p", "0.5", "--top-k", "7", "--sampling-seed", "9007199254740993",
				"--stop", "END", "--stop", "a,b", "--ignore-eos")
			want := map[string]any{
				"temperature": 0.25, "top_p": 0.5, "top_k": 7, "stop": []string{"END", "a,b"}, "ignore_eos": true,
			}
			for i, b := range bodies {
				if want := map[string]string{"chat": "/v1/chat/completions", "completions": "/v1/completions"}[apiName]; paths[i] != want {
					t.Errorf("request %d went to %s", i, paths[i])
				}
				for k, v := range want {
					if !jsonEq(t, b[k], v) {
						t.Errorf("request %d: %s = %s, want %v", i, k, b[k], v)
					}
				}
				// The seed is past 2^53: it must arrive as written, not as a float.
				if got := string(b["seed"]); got != "9007199254740993" {
					t.Errorf("request %d: seed = %s, want 9007199254740993", i, got)
				}
				if string(b["stream"]) != "true" || b["stream_options"] == nil {
					t.Errorf("request %d: stream %s, stream_options %s", i, b["stream"], b["stream_options"])
				}
			}
			r := run.Config.Request
			if r == nil {
				t.Fatal("the run file records no config.request")
			}
			if *r.Temperature != 0.25 || *r.TopP != 0.5 || *r.TopK != 7 || *r.Seed != 9007199254740993 ||
				!reflect.DeepEqual(r.Stop, []string{"END", "a,b"}) || !*r.IgnoreEOS || r.ExtraBody != nil {
				t.Errorf("config.request = %+v", *r)
			}
		})
	}
}

// TestBenchShapeOnlyGivenFlagsSent: a flag given sends its value, zero
// included; a flag not given sends nothing, and the run file says so.
func TestBenchShapeOnlyGivenFlagsSent(t *testing.T) {
	run, _, bodies := shapeBench(t, "--temperature", "0", "--ignore-eos=false")
	for i, b := range bodies {
		if string(b["temperature"]) != "0" || string(b["ignore_eos"]) != "false" {
			t.Errorf("request %d: temperature %s, ignore_eos %s; want 0 and false", i, b["temperature"], b["ignore_eos"])
		}
		for _, k := range []string{"top_p", "top_k", "seed", "stop"} {
			if v, ok := b[k]; ok {
				t.Errorf("request %d sent %s = %s, from no flag", i, k, v)
			}
		}
	}
	r := run.Config.Request
	if r == nil || r.Temperature == nil || *r.Temperature != 0 || r.IgnoreEOS == nil || *r.IgnoreEOS ||
		r.TopP != nil || r.TopK != nil || r.Seed != nil || r.Stop != nil || r.ExtraBody != nil {
		t.Errorf("config.request = %+v, want temperature 0 and ignore_eos false alone", r)
	}

	// No flag at all: nothing is sent, and nothing recorded.
	run, _, bodies = shapeBench(t)
	for i, b := range bodies {
		for _, k := range shapeKeys {
			if v, ok := b[k]; ok {
				t.Errorf("without flags, request %d sent %s = %s", i, k, v)
			}
		}
	}
	if run.Config.Request != nil {
		t.Errorf("without flags, config.request = %+v", *run.Config.Request)
	}
}

func TestBenchShapeExtraBodyMerges(t *testing.T) {
	extra := `{"min_p": 0.05, "chat_template_kwargs": {"enable_thinking": false},
		"messages": [{"role": "user", "content": "fixed"}], "top_k": 3}`
	run, _, bodies := shapeBench(t, "--extra-body", extra, "--temperature", "0.5")
	for i, b := range bodies {
		if !jsonEq(t, b["min_p"], 0.05) || !jsonEq(t, b["chat_template_kwargs"], map[string]any{"enable_thinking": false}) || !jsonEq(t, b["top_k"], 3) {
			t.Errorf("request %d: the extra keys did not arrive: %v", i, b)
		}
		// Its keys replace tokenpulse's own.
		if !jsonEq(t, b["messages"], []map[string]string{{"role": "user", "content": "fixed"}}) {
			t.Errorf("request %d: messages = %s, want the extra body's", i, b["messages"])
		}
		// And tokenpulse's own stay where it sets none.
		if !jsonEq(t, b["temperature"], 0.5) || string(b["model"]) != `"m"` || string(b["stream"]) != "true" ||
			!jsonEq(t, b["stream_options"], map[string]bool{"include_usage": true}) {
			t.Errorf("request %d: temperature %s, model %s, stream %s, stream_options %s", i, b["temperature"], b["model"], b["stream"], b["stream_options"])
		}
	}
	r := run.Config.Request
	if r == nil || r.ExtraBody == nil || !jsonEq(t, r.ExtraBody, map[string]any{
		"min_p": 0.05, "chat_template_kwargs": map[string]any{"enable_thinking": false},
		"messages": []map[string]string{{"role": "user", "content": "fixed"}}, "top_k": 3,
	}) || r.Temperature == nil || *r.Temperature != 0.5 {
		t.Errorf("config.request = %+v", r)
	}
}

func TestBenchShapeBadValuesAreUsageErrors(t *testing.T) {
	var c bodyCapture
	url := c.start(t)
	for _, tc := range []struct {
		args []string
		want string // in the message
	}{
		{[]string{"--temperature", "-0.1"}, "--temperature must be"},
		{[]string{"--temperature", "NaN"}, "--temperature must be"},
		{[]string{"--temperature", "+Inf"}, "--temperature must be"},
		{[]string{"--top-p", "0"}, "--top-p must be in (0, 1]"},
		{[]string{"--top-p", "1.01"}, "--top-p must be in (0, 1]"},
		{[]string{"--top-k", "-1"}, "--top-k must be ≥ 0"},
		{[]string{"--stop", ""}, "--stop must not be empty"},
		{[]string{"--extra-body", "{bad"}, "--extra-body: not a JSON object"},
		{[]string{"--extra-body", "[1, 2]"}, "--extra-body: not a JSON object"},
		{[]string{"--extra-body", `"x"`}, "--extra-body: not a JSON object"},
		{[]string{"--extra-body", "null"}, "--extra-body: not a JSON object"},
		{[]string{"--extra-body", `{"a": 1} {"b": 2}`}, "--extra-body: not a JSON object"},
		{[]string{"--extra-body", `{"stream": false}`}, `"stream" may not be set`},
		{[]string{"--extra-body", `{"stream_options": null}`}, `"stream_options" may not be set`},
		{[]string{"--extra-body", `{"max_tokens": 9}`}, "--max-tokens instead"},
		{[]string{"--extra-body", `{"model": "x"}`}, "--model-name instead"},
		{[]string{"--extra-body", `{"temperature": 1}`, "--temperature", "0"}, "--temperature instead"},
		{[]string{"--extra-body", `{"stop": "x"}`, "--stop", "y"}, "--stop instead"},
		// One level past the bound (5,000 levels in 10 KB made a 50 MB
		// run file before; api's test nests 10⁴).
		{[]string{"--extra-body", `{"a":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + "}"}, "--extra-body: nested 65 levels or more: at most 64"},
		{[]string{"--extra-body", `{"a":"` + strings.Repeat("x", 64<<10) + `"}`}, "--extra-body: 65544 bytes: at most 64 KiB"},
		// -H values that started the run (every request failed as
		// "connect", exit 1) or were dropped or broke the abort.
		{[]string{"-H", "X-A: b\r\nX-Injected: yes"}, "control character"},
		{[]string{"-H", "Bad Name: v"}, "not an HTTP token"},
		{[]string{"-H", "Host: evil.example"}, "header Host is tokenpulse's own: the host comes from --url"},
		{[]string{"-H", "X-Request-ID: fixed"}, "header X-Request-ID is tokenpulse's own"},
		{[]string{"-H", "Content-Length: 3"}, "header Content-Length is tokenpulse's own"},
		{[]string{"-H", "Transfer-Encoding: chunked"}, "header Transfer-Encoding is tokenpulse's own"},
		{[]string{"-H", "Connection: close"}, "header Connection is tokenpulse's own"},
	} {
		args := append([]string{"bench", "--url", url, "--model-name", "m", "--suite", writeBenchSuite(t, "30s"),
			"-n", "1", "--warmup", "0", "--out", t.TempDir(), "--no-history", "-q"}, tc.args...)
		text, code := cliRun(t, args...)
		if code != exitUsage || !strings.Contains(text, tc.want) {
			t.Errorf("%q: exit %d, want %d with %q:\n%s", tc.args, code, exitUsage, tc.want, text)
		}
	}
	if _, bodies := c.snapshot(); len(bodies) != 0 {
		t.Errorf("%d requests were sent with bad flags", len(bodies))
	}
}

// TestRequestShapeClientRefusesStream: a stream.Client given an extra
// body that would break its stream fails the request without sending it.
func TestRequestShapeClientRefusesStream(t *testing.T) {
	var c bodyCapture
	url := c.start(t)
	for _, extra := range []string{`{"stream": false}`, `{"stream_options": {}}`, `[1]`} {
		cl := &stream.Client{BaseURL: url, Model: "m", Options: api.RequestOptions{ExtraBody: json.RawMessage(extra)}}
		tr := cl.Do(context.Background(), stream.Request{Prompt: "hi"})
		if tr.Err == nil || !strings.Contains(tr.Err.Error(), "extra body") {
			t.Errorf("%s: error %v, want one naming the extra body", extra, tr.Err)
		}
	}
	if _, bodies := c.snapshot(); len(bodies) != 0 {
		t.Errorf("%d requests were sent", len(bodies))
	}
}
