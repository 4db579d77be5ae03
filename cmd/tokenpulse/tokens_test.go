package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/engine/bundled"
	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/tokenizer"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestBenchTPOTIsPerToken: against a server that sends four tokens per
// event and says so (the mock), TPOT is per token and gaps per event: a
// request's TPOT is its span over the tokens after the first event, a
// quarter of its mean gap, where TPOT was once the mean gap itself.
func TestBenchTPOTIsPerToken(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 2 * time.Millisecond, ITL: 2 * time.Millisecond, Tokens: 24, TokensPerEvent: 4})
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "6",
		"--warmup", "0", "--out", out, "--no-history", "-q", "--max-tokens", "24")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	o := run.Summary.Overall
	if o.Counting != "per-event" || math.Abs(o.TokensPerEvent-4) > 1e-9 {
		t.Fatalf("counting %q, %v tokens per event; want per-event, 4", o.Counting, o.TokensPerEvent)
	}
	// Six events of four tokens each request: 5 gaps, 20 tokens after
	// the first event, so TPOT = span/20 and the mean gap = span/5.
	if got, want := o.TPOTMs.Mean*4, o.GapMs.Mean; math.Abs(got-want) > 1e-6*want {
		t.Errorf("4 × TPOT mean = %v ms, gap mean = %v ms: TPOT is not per token", got, want)
	}
	if got, want := o.TokenIntervalMs.Count, 6*20; got != want {
		t.Errorf("%d token intervals, want %d (20 per request)", got, want)
	}
}

// scriptedBatcher serves chat streams whose events carry three tokens of
// the bundled vocabulary each, with no usage and no count: a server that
// batches without saying so.
func scriptedBatcher(t *testing.T) (url string, perEvent []string) {
	t.Helper()
	f, err := gguf.Parse(bundled.Model)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode("Once upon a time, there was a little girl named Lily. She liked to play in the park with her dog.", false, false)
	for i := 0; i < len(ids); i += 3 {
		perEvent = append(perEvent, tok.Decode(ids[i:min(i+3, len(ids))]))
	}
	perEvent[0] = strings.TrimPrefix(perEvent[0], " ") // the space prefix is not sent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i, s := range perEvent {
			b, _ := json.Marshal(s)
			finish := "null"
			if i == len(perEvent)-1 {
				finish = `"stop"`
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":%s}]}\n\n", b, finish)
			fl.Flush()
			time.Sleep(time.Millisecond)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL, perEvent
}

func TestBenchTokenizerCountsEachEvent(t *testing.T) {
	url, events := scriptedBatcher(t)
	vocab := filepath.Join(t.TempDir(), "vocab.gguf")
	if err := os.WriteFile(vocab, bundled.Model, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"bench", "--url", url, "--model-name", "x", "--suite", writeBenchSuite(t, "30s"), "-n", "3",
		"--warmup", "0", "--no-history", "-q"}

	// Without a tokenizer: one token per event is all tokenpulse can say,
	// and the report says the figures are per event.
	out := t.TempDir()
	text, code := cliRun(t, append(args, "--out", out)...)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Summary.Overall.Counting; got != "events" {
		t.Errorf("counting without a tokenizer = %q, want events", got)
	}
	if !strings.Contains(text, "no token counts") {
		t.Errorf("the report does not say the figures are per event:\n%s", text)
	}

	out = t.TempDir()
	text, code = cliRun(t, append(args, "--out", out, "--tokenizer", vocab)...)
	if code != exitOK {
		t.Fatalf("exit %d with --tokenizer:\n%s", code, text)
	}
	run, err = runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Three tokens an event; the last may hold fewer.
	want := slices.Repeat([]int{3}, len(events))
	for _, q := range run.Requests {
		if q.TokenSource != "tokenizer" || len(q.TokenCounts) != len(events) {
			t.Fatalf("request %d: source %q, counts %v; want tokenizer counts for %d events", q.Index, q.TokenSource, q.TokenCounts, len(events))
		}
		if !slices.Equal(q.TokenCounts[:len(events)-1], want[:len(events)-1]) {
			t.Errorf("request %d: counts %v, want 3 per event", q.Index, q.TokenCounts)
		}
	}
	o := run.Summary.Overall
	if strings.Contains(text, "no token counts") {
		t.Errorf("with --tokenizer the report still says there are no token counts:\n%s", text)
	}
	if o.Counting != "per-event" || o.TokensPerEvent < 2.5 || run.Config.Tokenizer != "vocab.gguf" {
		t.Errorf("counting %q, %v tokens per event, tokenizer %q; want per-event, about 3, vocab.gguf", o.Counting, o.TokensPerEvent, run.Config.Tokenizer)
	}

	// A file that is no GGUF is a usage error.
	bad := filepath.Join(t.TempDir(), "x.gguf")
	os.WriteFile(bad, []byte("not a gguf"), 0o644)
	if _, code := cliRun(t, append(args, "--out", t.TempDir(), "--tokenizer", bad)...); code != exitUsage {
		t.Errorf("a bad --tokenizer exits %d, want %d", code, exitUsage)
	}
}
