package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

func TestRecordCopiesTheTrace(t *testing.T) {
	tr := &stream.Trace{
		RequestID: "r1", Status: 200, Retried: true,
		Sent: 1, Headers: 2, FirstByte: 3, LastEvent: 40 * time.Millisecond,
		TokenTimes:  []time.Duration{10 * time.Millisecond, 20 * time.Millisecond},
		TokenCounts: []int{3, 2},
		ServerTimes: []int64{100, 200},
		CountsSent:  true,
		Usage:       &api.Usage{PromptTokens: 7, CompletionTokens: 5},
		Timings:     &api.Timings{PrefillNS: 2, DecodeNS: 3},
	}
	r := Record(tr)
	if r.RequestID != "r1" || !r.Retried || r.TTFTNS != 10e6 || r.E2ENS != 40e6 {
		t.Errorf("record = %+v", r)
	}
	if r.TokenSource != "usage" || r.OutputTokens != 5 || r.PromptTokens != 7 {
		t.Errorf("tokens: source %q output %d prompt %d, want usage 5 7", r.TokenSource, r.OutputTokens, r.PromptTokens)
	}
	if !reflect.DeepEqual(r.TokenCounts, []int{3, 2}) || !reflect.DeepEqual(r.ServerTimesNS, []int64{100, 200}) {
		t.Errorf("counts %v server times %v", r.TokenCounts, r.ServerTimesNS)
	}
	if r.Server == nil || r.Server.PrefillNS != 2 || r.Server.DecodeNS != 3 {
		t.Errorf("server split = %+v", r.Server)
	}

	plain := Record(&stream.Trace{TokenTimes: []time.Duration{1, 2}, TokenCounts: []int{1, 1}, ServerTimes: []int64{0, 0},
		Err: &stream.Error{Kind: stream.KindCut, Message: "x"}})
	if plain.TokenSource != "events" || plain.TokenCounts != nil || plain.ServerTimesNS != nil {
		t.Errorf("one token per event without server times: source %q counts %v server %v, want events, nil, nil", plain.TokenSource, plain.TokenCounts, plain.ServerTimesNS)
	}
	if plain.ErrorKind != "cut" || plain.OK() {
		t.Errorf("error kind %q", plain.ErrorKind)
	}

	// The server's counts are kept as it sent them, ones included.
	ones := Record(&stream.Trace{TokenTimes: []time.Duration{1, 2}, TokenCounts: []int{1, 1}, ServerTimes: []int64{5, 6}, CountsSent: true})
	if !reflect.DeepEqual(ones.TokenCounts, []int{1, 1}) {
		t.Errorf("counts of one sent by the server: %v, want [1 1]", ones.TokenCounts)
	}
}

func TestRecordServerTimings(t *testing.T) {
	tokenpulse := Record(&stream.Trace{Timings: &api.Timings{QueueNS: 1, PrefillNS: 2, DecodeNS: 3, PromptTokens: 4, OutputTokens: 5}})
	if got, want := tokenpulse.Server, (&runfile.ServerTimings{QueueNS: 1, PrefillNS: 2, DecodeNS: 3, PromptTokens: 4, DecodeTokens: 5, Source: "tokenpulse"}); !reflect.DeepEqual(got, want) {
		t.Errorf("tokenpulse timings: Server = %+v, want %+v", got, want)
	}
	// With a prompt cache, the prompt tokens processed are those not reused
	// (as llama-server's prompt_n counts them).
	cached := Record(&stream.Trace{Timings: &api.Timings{PrefillNS: 2, PromptTokens: 40, CachedTokens: 31, OutputTokens: 5}})
	if s := cached.Server; s == nil || s.PromptTokens != 9 || s.CachedTokens != 31 {
		t.Errorf("31 of 40 prompt tokens cached: Server = %+v, want 9 processed, 31 cached", s)
	}

	// llama-server's final chunk, as the client keeps it.
	llama := &api.LlamaTimings{
		PromptN: 12, PromptMS: 15.208, PromptPerTokenMS: 1.2673333333333334, PromptPerSecond: 789.05,
		PredictedN: 3, PredictedMS: 24.512, PredictedPerTokenMS: 8.170666666666667, PredictedPerSecond: 122.39,
	}
	r := Record(&stream.Trace{LlamaTimings: llama})
	if got, want := r.Server, (&runfile.ServerTimings{PrefillNS: 15_208_000, DecodeNS: 24_512_000, PromptTokens: 12, DecodeTokens: 3, Source: "llama.cpp"}); !reflect.DeepEqual(got, want) {
		t.Errorf("llama.cpp timings: Server = %+v, want %+v", got, want)
	}

	both := Record(&stream.Trace{Timings: &api.Timings{PrefillNS: 7}, LlamaTimings: llama})
	if both.Server == nil || both.Server.Source != "tokenpulse" || both.Server.PrefillNS != 7 {
		t.Errorf("both sent: Server = %+v, want tokenpulse's (the server spoken to)", both.Server)
	}
	if none := Record(&stream.Trace{}); none.Server != nil {
		t.Errorf("none sent: Server = %+v, want nil", none.Server)
	}
	if got := msToNS(math.NaN()); got != 0 {
		t.Errorf("msToNS(NaN) = %d, want 0", got)
	}
}

// A llama-server (c392e50) stream, end to end: its final chunk's timings
// become the run file's server split.
func TestRecordLlamaServerStream(t *testing.T) {
	frames := []string{
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant"}}],"created":1740000000,"id":"chatcmpl-Xq2","model":"m","object":"chat.completion.chunk"}`,
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Hi"}}],"created":1740000000,"id":"chatcmpl-Xq2","model":"m","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk"}`,
		`{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1740000000,"id":"chatcmpl-Xq2","model":"m","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk","usage":{"completion_tokens":1,"prompt_tokens":5,"total_tokens":6},"timings":{"predicted_ms":0.021,"predicted_n":1,"predicted_per_second":47619.04761904762,"predicted_per_token_ms":0.021,"prompt_ms":9.876,"prompt_n":5,"prompt_per_second":506.27784528149,"prompt_per_token_ms":1.9752}}`,
		`[DONE]`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, f := range frames {
			fmt.Fprintf(w, "data: %s\n\n", f)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	c := &stream.Client{BaseURL: srv.URL, Model: "m"}
	r := Record(c.Do(context.Background(), stream.Request{Prompt: "p"}))
	if !r.OK() {
		t.Fatalf("error %s", r.Error)
	}
	want := &runfile.ServerTimings{PrefillNS: 9_876_000, DecodeNS: 21_000, PromptTokens: 5, DecodeTokens: 1, Source: "llama.cpp"}
	if !reflect.DeepEqual(r.Server, want) {
		t.Errorf("Server = %+v, want %+v", r.Server, want)
	}
	if r.OutputTokens != 1 || r.TokenSource != "usage" || r.PromptTokens != 5 {
		t.Errorf("tokens: output %d from %q, prompt %d", r.OutputTokens, r.TokenSource, r.PromptTokens)
	}
}
