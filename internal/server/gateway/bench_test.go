package gateway

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/stats"
)

// pingPong is the upstream's backend: it emits one token, then waits until
// the gateway has emitted it, so each token is timed alone.
type pingPong struct {
	emitted chan time.Time
	ack     chan struct{}
}

func (p *pingPong) Models() []string { return []string{"bench"} }

func (p *pingPong) Warmup(context.Context) (*api.Warmup, error) { return nil, nil }

func (p *pingPong) Generate(ctx context.Context, req *server.GenRequest, emit func(server.Piece) error) (server.GenResult, error) {
	for i := range req.MaxTokens {
		at := time.Now()
		p.emitted <- at
		if err := emit(server.Piece{Text: " token", At: at}); err != nil {
			return server.GenResult{}, err
		}
		if i < req.MaxTokens-1 {
			select {
			case <-p.ack:
			case <-ctx.Done():
				return server.GenResult{}, ctx.Err()
			}
		}
	}
	return server.GenResult{OutputTokens: req.MaxTokens, FinishReason: "length"}, nil
}

// BenchmarkGatewayAddedLatencyPerToken measures what the gateway adds to
// each token: from the upstream backend's emit, through the upstream
// server's stream on a loopback socket, to the gateway's own emit (SSE
// decoding and chunk parsing included). It reports p50 and p99 in µs per
// token.
func BenchmarkGatewayAddedLatencyPerToken(b *testing.B) {
	const perStream = 512
	pp := &pingPong{emitted: make(chan time.Time, perStream), ack: make(chan struct{})}
	us, err := server.New(pp, server.Options{MaxTokensLimit: perStream})
	if err != nil {
		b.Fatal(err)
	}
	up := httptest.NewServer(us.Handler())
	defer up.Close()
	g, err := New(Options{URL: up.URL})
	if err != nil {
		b.Fatal(err)
	}
	lat := make([]float64, 0, b.N)
	b.ResetTimer()
	for len(lat) < b.N {
		n := min(perStream, b.N-len(lat))
		got := 0
		req := &server.GenRequest{ID: server.NewRequestID(), Prompt: "x", MaxTokens: n, TopP: 1}
		_, err := g.Generate(context.Background(), req, func(p server.Piece) error {
			lat = append(lat, float64(p.At.Sub(<-pp.emitted).Nanoseconds())/1e3)
			got++
			if got < n {
				pp.ack <- struct{}{}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(stats.Percentile(lat, 50), "p50_µs/token")
	b.ReportMetric(stats.Percentile(lat, 99), "p99_µs/token")
}
