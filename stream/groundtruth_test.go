package stream

import (
	"context"
	"fmt"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

// startMock serves the mock with profile p through the real server on a
// loopback httptest server and returns a client for it.
func startMock(tb testing.TB, p mock.Profile) *Client {
	tb.Helper()
	srv, err := server.New(mock.New(p, nil), server.Options{Parallel: 1024, Queue: -1})
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.WarmUp(context.Background()); err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	tb.Cleanup(hs.Close)
	return &Client{BaseURL: hs.URL, Model: mock.ModelName}
}

// emitErrors returns, for each content event of tr, its arrival on the
// client's wall clock (Start + offset) less the mock's emit time.
func emitErrors(tr *Trace) []time.Duration {
	out := make([]time.Duration, len(tr.TokenTimes))
	for i, at := range tr.TokenTimes {
		out[i] = time.Duration(tr.Start.UnixNano() + int64(at) - tr.ServerTimes[i])
	}
	return out
}

// TestGroundTruth holds every measured token arrival against the mock's
// emit time for the same token. The bounds cannot flake on a loaded
// machine: a token cannot arrive before it was sent (less 1 ms for the
// wall clock being slewed between the two readings), and a second is far
// beyond any real delay on loopback; the benchmark below gives the real
// figures.
func TestGroundTruth(t *testing.T) {
	const streams = 8
	tests := []struct {
		name       string
		p          mock.Profile
		wantEvents int
		wantCounts []int // nil: one token per event
	}{
		{"one token per event", mock.Profile{TTFT: 20 * time.Millisecond, ITL: 5 * time.Millisecond, Tokens: 20}, 20, nil},
		{"three tokens per event", mock.Profile{TTFT: 10 * time.Millisecond, ITL: 2 * time.Millisecond, Tokens: 10, TokensPerEvent: 3}, 4, []int{3, 3, 3, 1}},
		{"jitter and stalls", mock.Profile{TTFT: 10 * time.Millisecond, ITL: 3 * time.Millisecond, Jitter: 2 * time.Millisecond, Tokens: 15, StallEvery: 5, Stall: 10 * time.Millisecond, Seed: 1}, 15, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startMock(t, tt.p)
			traces := make([]*Trace, streams)
			var wg sync.WaitGroup
			for i := range streams {
				wg.Go(func() {
					traces[i] = c.Do(context.Background(), Request{Prompt: fmt.Sprintf("question %d", i), MaxTokens: 100})
				})
			}
			wg.Wait()
			for i, tr := range traces {
				checkGroundTruth(t, i, tr, tt.p.Tokens, tt.wantEvents, tt.wantCounts)
			}
		})
	}
}

func checkGroundTruth(t *testing.T, i int, tr *Trace, tokens, events int, counts []int) {
	t.Helper()
	if !tr.OK() {
		t.Fatalf("stream %d: Err = %v", i, tr.Err)
	}
	if got := tr.ContentEvents(); got != events {
		t.Errorf("stream %d: ContentEvents = %d, want %d", i, got, events)
	}
	if got := tr.OutputTokens(); got != tokens {
		t.Errorf("stream %d: OutputTokens = %d, want %d", i, got, tokens)
	}
	if counts == nil {
		counts = slices.Repeat([]int{1}, events)
	}
	if got := tr.TokenCounts; !reflect.DeepEqual(got, counts) {
		t.Errorf("stream %d: TokenCounts = %v, want %v", i, got, counts)
	}
	if tr.ForeignEvents != 0 || tr.EchoedID != tr.RequestID {
		t.Errorf("stream %d: ForeignEvents = %d, echoed %q for %q", i, tr.ForeignEvents, tr.EchoedID, tr.RequestID)
	}
	if !slices.IsSorted(tr.TokenTimes) {
		t.Errorf("stream %d: arrivals out of order: %v", i, tr.TokenTimes)
	}
	for j := 1; j < len(tr.ServerTimes); j++ {
		if tr.ServerTimes[j] <= tr.ServerTimes[j-1] {
			t.Errorf("stream %d: emit times not increasing at %d: %v", i, j, tr.ServerTimes)
		}
	}
	for j, e := range emitErrors(tr) {
		if e < -time.Millisecond || e > time.Second {
			t.Errorf("stream %d event %d: arrival − emit = %v, want in [−1ms, 1s]", i, j, e)
		}
	}
	if got := len(tr.ServerTimes); got != events {
		t.Errorf("stream %d: ServerTimes has %d, want %d", i, got, events)
	}
}

// relativeErrors returns, for each content event of tr after the first,
// its arrival relative to the first content event's arrival less its emit
// time relative to the first event's emit:
//
//	(arrival[i] − arrival[0]) − (emit[i] − emit[0]),  i ≥ 1.
//
// Both clocks are the same machine's, and neither the client's nor the
// server's constant delay (TTFT, the server's path to the socket) enters,
// so this is the error of the token times a reader of the trace uses
// (gaps, TPOT, visible stalls).
func relativeErrors(tr *Trace) []time.Duration {
	if len(tr.TokenTimes) < 2 {
		return nil
	}
	out := make([]time.Duration, 0, len(tr.TokenTimes)-1)
	for i := 1; i < len(tr.TokenTimes); i++ {
		arr := tr.TokenTimes[i] - tr.TokenTimes[0]
		emit := time.Duration(tr.ServerTimes[i] - tr.ServerTimes[0])
		out = append(out, arr-emit)
	}
	return out
}

// BenchmarkMeasurementError runs 1, 64 and 256 concurrent streams against
// the mock served in the same process (20 ms between tokens, 50 tokens;
// starts spread over one ITL) and reports the client's timestamp error
// relative to the first token (see [relativeErrors]) in µs, as absolute
// values: p50, p99 and max over every token after the first of every
// stream. The error includes the server's own path from its emit stamp to
// the socket (less that of the first token), so it bounds the client's
// error from above. Each op is one round of the streams on connections
// kept alive from round to round; a first round, outside the timing,
// dials them (its p99 is reported as dial-p99-µs).
//
// The client is the default one, which on Linux takes each read's
// arrival from the kernel's receive timestamp (see stampConn); the
// read-stamps variants stamp arrivals when reads return, as on other
// systems, for comparison.
func BenchmarkMeasurementError(b *testing.B) {
	for _, read := range []bool{false, true} {
		for _, streams := range []int{1, 64, 256} {
			name := fmt.Sprintf("streams=%d", streams)
			if read {
				name = "read-stamps/" + name
			}
			b.Run(name, func(b *testing.B) { benchmarkMeasurementError(b, streams, read) })
		}
	}
}

func benchmarkMeasurementError(b *testing.B, streams int, readStamps bool) {
	p := mock.Profile{TTFT: 20 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 50, TokensPerEvent: 1}
	c := startMock(b, p)
	c.readStamps = readStamps
	round := func() (errs []time.Duration, failed int) {
		traces := make([]*Trace, streams)
		var wg sync.WaitGroup
		for i := range streams {
			wg.Go(func() {
				// Starts spread over one ITL, as streams of a running
				// load are, rather than all 256 tokens due in the same
				// instant.
				time.Sleep(time.Duration(i) * p.ITL / time.Duration(streams))
				traces[i] = c.Do(context.Background(), Request{Prompt: "benchmark", MaxTokens: 100})
			})
		}
		wg.Wait()
		for _, tr := range traces {
			if !tr.OK() {
				failed++
				continue
			}
			for _, e := range relativeErrors(tr) {
				errs = append(errs, max(e, -e))
			}
		}
		return errs, failed
	}
	q := func(errs []time.Duration, f float64) float64 {
		slices.Sort(errs)
		return float64(errs[int(f*float64(len(errs)-1))]) / 1e3
	}
	// The first round dials every connection while the process's heap
	// grows (the in-process server's too), as a run's warm-up requests
	// do; it is reported apart, as dial-p99, and the figures are of the
	// rounds after it.
	dial, failed := round()
	var errs []time.Duration
	for b.Loop() {
		e, f := round()
		errs = append(errs, e...)
		failed += f
	}
	if failed > 0 {
		b.Fatalf("%d requests failed", failed)
	}
	b.ReportMetric(q(errs, 0.5), "p50-µs")
	b.ReportMetric(q(errs, 0.99), "p99-µs")
	b.ReportMetric(q(errs, 1), "max-µs")
	b.ReportMetric(q(dial, 0.99), "dial-p99-µs")
	b.ReportMetric(float64(len(errs))/float64(b.N), "tokens/op")
}
