package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tokenpulse/tokenpulse/api"
)

// fake is a scripted backend whose pacing the test controls: when gate is
// set, each token waits for a value on it (or for ctx to end).
type fake struct {
	models []string
	script []string
	gate   chan struct{}
	// sloppy emits the next token after the gate without checking ctx,
	// as a careless backend would.
	sloppy bool
	// tooLong rejects prompts containing it with a RequestError.
	tooLong string
	// pieceTokens, when > 1, sends every piece as that many tokens.
	pieceTokens int

	calls   atomic.Int64
	emitted atomic.Int64
	started chan string // request ids as Generate begins (buffered)
	stopped chan error  // Generate's error as it returns (buffered)
}

func newFake(script ...string) *fake {
	return &fake{models: []string{"fake-1"}, script: script, started: make(chan string, 1024), stopped: make(chan error, 1024)}
}

func (f *fake) Models() []string { return f.models }

func (f *fake) Warmup(context.Context) (*api.Warmup, error) {
	return &api.Warmup{LoadNS: 1, PageInNS: 2, KVInitNS: 3, FirstForwardNS: 4, TotalNS: 10}, nil
}

func (f *fake) Generate(ctx context.Context, req *GenRequest, emit func(Piece) error) (res GenResult, err error) {
	f.calls.Add(1)
	if f.tooLong != "" && (strings.Contains(req.Prompt, f.tooLong) || (len(req.Messages) > 0 && strings.Contains(string(req.Messages[0].Content), f.tooLong))) {
		return GenResult{}, &RequestError{Status: 400, Code: "context_length_exceeded", Param: "messages", Message: "prompt is longer than the context"}
	}
	f.started <- req.ID
	defer func() { f.stopped <- err }()
	res = GenResult{PromptTokens: 7, Prefill: time.Millisecond, FinishReason: "stop"}
	for i, t := range f.script {
		if i >= req.MaxTokens {
			res.FinishReason = "length"
			break
		}
		if !f.sloppy {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		if f.gate != nil {
			if f.sloppy {
				<-f.gate
			} else {
				select {
				case <-f.gate:
				case <-ctx.Done():
					return res, ctx.Err()
				}
			}
		}
		if !f.sloppy {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		f.emitted.Add(1)
		if err := emit(Piece{Text: t, Tokens: f.pieceTokens, At: time.Now()}); err != nil {
			return res, err
		}
		res.OutputTokens += max(f.pieceTokens, 1)
	}
	res.Decode = 2 * time.Millisecond
	return res, nil
}

// event is one parsed SSE event of a raw stream.
type event struct {
	id, data string
	retry    string
	chunk    *api.Chunk
}

// readEvent reads one event (up to its blank line) from br.
func readEvent(t testing.TB, br *bufio.Reader) (event, error) {
	t.Helper()
	var ev event
	var data []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\n")
		if line == "" {
			break
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		switch k {
		case "id":
			ev.id = v
		case "data":
			data = append(data, v)
		case "retry":
			ev.retry = v
		}
	}
	ev.data = strings.Join(data, "\n")
	if ev.data != "" && ev.data != "[DONE]" {
		var c api.Chunk
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
			t.Fatalf("event data %q: %v", ev.data, err)
		}
		ev.chunk = &c
	}
	return ev, nil
}

// post sends a JSON body to url with optional headers.
func post(t testing.TB, ctx context.Context, url, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t testing.TB, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// metricValue reads a counter or gauge (with the given labels) from reg.
func metricValue(t testing.TB, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if !hasLabel(m, labels[i], labels[i+1]) {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}

func hasLabel(m *dto.Metric, k, v string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == k && l.GetValue() == v {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds. There is no deadline of its own: the
// test binary's -timeout bounds it.
func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}
