package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/stats"
)

// pingPong emits one token, then waits until the reader has seen it, so
// each token's latency is measured alone, with no queue in front of it.
type pingPong struct {
	emitted chan time.Time // when each token left the backend
	ack     chan struct{}  // the reader has the token
}

func (p *pingPong) Models() []string { return []string{"bench"} }

func (p *pingPong) Warmup(context.Context) (*api.Warmup, error) { return nil, nil }

func (p *pingPong) Generate(ctx context.Context, req *GenRequest, emit func(Piece) error) (GenResult, error) {
	for i := range req.MaxTokens {
		if err := ctx.Err(); err != nil {
			return GenResult{}, err
		}
		at := time.Now()
		p.emitted <- at
		if err := emit(Piece{Text: " token", At: at}); err != nil {
			return GenResult{}, err
		}
		if i < req.MaxTokens-1 {
			select {
			case <-p.ack:
			case <-ctx.Done():
				return GenResult{}, ctx.Err()
			}
		}
	}
	return GenResult{OutputTokens: req.MaxTokens, FinishReason: "length"}, nil
}

// BenchmarkServerOverheadPerToken measures the server's own cost per token:
// from the backend's emit to the event's last byte read by a client on a
// loopback socket (JSON encoding, SSE framing, flush, the kernel's loopback
// path). It reports p50 and p99 in µs per token.
func BenchmarkServerOverheadPerToken(b *testing.B) {
	const perStream = 512
	pp := &pingPong{emitted: make(chan time.Time, perStream), ack: make(chan struct{})}
	s, err := New(pp, Options{MaxTokensLimit: perStream})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { stop(); <-done }()
	url := "http://" + ln.Addr().String() + "/v1/completions"

	lat := make([]float64, 0, b.N)
	b.ResetTimer()
	for len(lat) < b.N {
		n := min(perStream, b.N-len(lat))
		body := `{"prompt":"x","stream":true,"max_tokens":` + strconv.Itoa(n) + `}`
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		got, inToken := 0, false
		for got < n {
			line, err := br.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if len(line) != 1 || !inToken {
				inToken = strings.HasPrefix(string(line), "data: {")
				continue
			}
			// The blank line ending a token event: it is all here.
			now := time.Now()
			inToken = false
			lat = append(lat, float64(now.Sub(<-pp.emitted).Nanoseconds())/1e3)
			got++
			if got < n {
				pp.ack <- struct{}{}
			}
		}
		resp.Body.Close()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(stats.Percentile(lat, 50), "p50_µs/token")
	b.ReportMetric(stats.Percentile(lat, 99), "p99_µs/token")
}
