package stream

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
)

// An event whose blank line never came (the body ends after its data) is
// dropped, as WHATWG says, and the stream is cut, not malformed, whether
// the event's JSON was complete or not.
func TestEventCutByTheEndIsACut(t *testing.T) {
	for _, tt := range []struct {
		name string
		last string
	}{
		{"half a JSON chunk", `data: {"choices":[{"index":0,"delta":{"content":"wor`},
		{"half a JSON chunk and its line end", `data: {"choices":[{"index":0,"delta":{"con` + "\n"},
		{"a whole chunk without its blank line", `data: {"choices":[{"index":0,"delta":{"content":"world"}}]}` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newScript(t, &script{frames: []string{content("Hello"), tt.last}})
			tr := c.Do(context.Background(), Request{Prompt: "p"})
			if tr.Err == nil || tr.Err.Kind != KindCut {
				t.Fatalf("Err = %v, want kind cut", tr.Err)
			}
			if !strings.Contains(tr.Err.Message, "mid-event") {
				t.Errorf("Message = %q, want it to say the stream ended mid-event", tr.Err.Message)
			}
			if got := tr.ContentEvents(); got != 1 || tr.Text != "Hello" || tr.Events != 1 {
				t.Errorf("%d content events of %d, text %q; want the 1 complete event only", got, tr.Events, tr.Text)
			}
		})
	}
}

// A cut-short event after the finish reason ends a complete answer.
func TestEventCutAfterTheFinishReason(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{content("a"), finish("stop"), `data: {"choices":[],"usa`}})
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if !tr.OK() || tr.FinishReason != "stop" {
		t.Errorf("Err = %v, finish %q; want a complete answer", tr.Err, tr.FinishReason)
	}
}

func TestContentTypes(t *testing.T) {
	frames := []string{content("a"), finish("stop"), done}
	for _, tt := range []struct {
		ctype   string
		wantOK  bool
		wantMsg []string
	}{
		{"text/html; charset=utf-8", false, []string{"not an event stream", "text/html"}},
		{"text/plain", false, []string{"not an event stream", "text/plain"}},
		{"application/x-ndjson", false, []string{"not an event stream", "application/x-ndjson"}},
		{"application/json", false, []string{"not an event stream", "application/json"}},
		{"Text/Event-Stream; charset=utf-8", true, nil},
		{"text/event-stream;;", true, nil}, // unparsable parameters: the type still says SSE
		{"none", true, nil},                // no Content-Type: read it (see notEventStream)
	} {
		t.Run(tt.ctype, func(t *testing.T) {
			c, _ := newScript(t, &script{ctype: tt.ctype, frames: frames})
			tr := c.Do(context.Background(), Request{Prompt: "p"})
			if tt.wantOK {
				if !tr.OK() || tr.ContentEvents() != 1 {
					t.Errorf("Err = %v, %d content events; want the stream read", tr.Err, tr.ContentEvents())
				}
				return
			}
			if tr.Err == nil || tr.Err.Kind != KindMalformed || tr.Err.Status != 200 {
				t.Fatalf("Err = %v, want kind malformed with status 200", tr.Err)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(tr.Err.Message, m) {
					t.Errorf("Message = %q, want it to contain %q", tr.Err.Message, m)
				}
			}
			if tr.Events != 0 {
				t.Errorf("Events = %d, want none read", tr.Events)
			}
		})
	}
}

// llamaServerStream is the stream of llama.cpp's llama-server (c392e50)
// for a chat request: a role chunk, one chunk per token, the final chunk
// with the finish reason, usage and timings (nlohmann::json writes keys
// in order), then [DONE].
var llamaServerStream = []string{
	`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant"}}],"created":1740000000,"id":"chatcmpl-Xq2","model":"gpt-3.5-turbo","object":"chat.completion.chunk"}` + "\n\n",
	`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Once"}}],"created":1740000000,"id":"chatcmpl-Xq2","model":"gpt-3.5-turbo","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk"}` + "\n\n",
	`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" upon"}}],"created":1740000000,"id":"chatcmpl-Xq2","model":"gpt-3.5-turbo","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk"}` + "\n\n",
	`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" a"}}],"created":1740000000,"id":"chatcmpl-Xq2","model":"gpt-3.5-turbo","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk","timings":{"predicted_ms":24.01,"predicted_n":3,"predicted_per_second":124.94,"predicted_per_token_ms":8.003333333333334,"prompt_ms":15.208,"prompt_n":12,"prompt_per_second":789.05,"prompt_per_token_ms":1.2673333333333334}}` + "\n\n",
	`data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":1740000000,"id":"chatcmpl-Xq2","model":"gpt-3.5-turbo","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk","usage":{"completion_tokens":3,"prompt_tokens":12,"total_tokens":15},"timings":{"predicted_ms":24.512,"predicted_n":3,"predicted_per_second":122.39,"predicted_per_token_ms":8.170666666666667,"prompt_ms":15.208,"prompt_n":12,"prompt_per_second":789.05,"prompt_per_token_ms":1.2673333333333334}}` + "\n\n",
	done,
}

func TestLlamaServerTimings(t *testing.T) {
	c, _ := newScript(t, &script{frames: llamaServerStream})
	tr := c.Do(context.Background(), Request{Prompt: "p", MaxTokens: 3})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	want := &api.LlamaTimings{
		PromptN: 12, PromptMS: 15.208, PromptPerTokenMS: 1.2673333333333334, PromptPerSecond: 789.05,
		PredictedN: 3, PredictedMS: 24.512, PredictedPerTokenMS: 8.170666666666667, PredictedPerSecond: 122.39,
	}
	if !reflect.DeepEqual(tr.LlamaTimings, want) {
		t.Errorf("LlamaTimings = %+v, want the final chunk's %+v", tr.LlamaTimings, want)
	}
	if tr.Timings != nil {
		t.Errorf("Timings = %+v, want none (that is tokenpulse's own)", tr.Timings)
	}
	if tr.Usage == nil || tr.Usage.CompletionTokens != 3 || tr.Usage.PromptTokens != 12 {
		t.Errorf("Usage = %+v", tr.Usage)
	}
	if got, want := tr.Text, "Once upon a"; got != want || tr.ContentEvents() != 3 || tr.FinishReason != "length" {
		t.Errorf("text %q, %d content events, finish %q", got, tr.ContentEvents(), tr.FinishReason)
	}
}

func TestTextEnds(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{
		`data: {"choices":[{"delta":{"reasoning_content":"hmm"}}]}` + "\n\n", // reasoning only: Text unchanged
		content("Hé"),
		`data: {"choices":[{"delta":{"role":"assistant"}}]}` + "\n\n", // no token: no entry
		content(" \"q\"\n"),
		`data: {"choices":[{"delta":{"content":"!","reasoning":"so"}}]}` + "\n\n",
		finish("stop"), done,
	}})
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	if got, want := tr.Text, "Hé \"q\"\n!"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	if got, want := tr.TextEnds, []int{0, 3, 8, 9}; !reflect.DeepEqual(got, want) {
		t.Errorf("TextEnds = %v, want %v", got, want)
	}
	if len(tr.TextEnds) != len(tr.TokenTimes) {
		t.Errorf("%d TextEnds for %d TokenTimes", len(tr.TextEnds), len(tr.TokenTimes))
	}
	if tr.ReasoningEvents != 2 {
		t.Errorf("ReasoningEvents = %d, want 2", tr.ReasoningEvents)
	}
}

// A malformed event leaves no trace of its content in Text.
func TestMalformedEventAddsNoText(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{content("a"), `data: {"choices":[{"delta":{"content":"b"}}],"x":}` + "\n\n", done}})
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if tr.Err == nil || tr.Err.Kind != KindMalformed {
		t.Fatalf("Err = %v, want malformed", tr.Err)
	}
	if tr.Text != "a" || !reflect.DeepEqual(tr.TextEnds, []int{1}) {
		t.Errorf("Text %q, TextEnds %v; want %q, [1]", tr.Text, tr.TextEnds, "a")
	}
}

// The parser takes the shapes encoding/json took, and rejects what it
// rejected.
func TestChunkShapes(t *testing.T) {
	for _, tt := range []struct {
		data    string
		token   bool
		text    string
		finish  string
		wantErr bool
	}{
		{`{"choices":[{"delta":{"content":"x"}}]}`, true, "x", "", false},
		{`{"choices":[{"delta":{"content":null}}]}`, false, "", "", false},
		{`{"choices":[{"delta":null,"finish_reason":"stop"}]}`, false, "", "stop", false},
		{`{"choices":[{"text":"a\u00e9\ud83d\ude00"}]}`, true, "aé😀", "", false},
		{`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`, true, "ab", "", false},
		{`{"choices":null}`, false, "", "", false},
		{`null`, false, "", "", false},
		{`{"choices":[{"delta":{"content":"a","extra":{"deep":[1,{"x":null}]}}}],"other":[true]}`, true, "a", "", false},
		{`{"choices":[{"delta":{"content":1}}]}`, false, "", "", true},
		{`{"choices":{}}`, false, "", "", true},
		{`{"choices":[1]}`, false, "", "", true},
		{`[]`, false, "", "", true},
		{`{"choices":[]`, false, "", "", true},
		{`{"choices":[]} x`, false, "", "", true},
		{`{"tokenpulse":{"server_ns":"soon"}}`, false, "", "", true},
	} {
		var p chunkParser
		err := p.parse([]byte(tt.data))
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, want error %v", tt.data, err, tt.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if p.token != tt.token || string(p.text) != tt.text || string(p.finish) != tt.finish {
			t.Errorf("%s: token %v text %q finish %q; want %v %q %q", tt.data, p.token, p.text, p.finish, tt.token, tt.text, tt.finish)
		}
	}
}

func TestChunkParserAllocatesNothingPerEvent(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	data := []byte(`{"id":"chatcmpl-tp-X","object":"chat.completion.chunk","created":1795943231,"model":"mock","choices":[{"index":0,"delta":{"content":" labore\u00e9"},"finish_reason":null}],"tokenpulse":{"server_ns":1795943232039778457,"offset_ns":50000000,"index":3,"tokens":1}}`)
	p := &chunkParser{text: make([]byte, 0, 1<<20)}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := p.parse(data); err != nil || !p.token || !p.hasExt {
			t.Fatalf("parse: %v", err)
		}
	})
	if allocs != 0 {
		t.Errorf("parse allocates %v times per event, want 0", allocs)
	}
}
