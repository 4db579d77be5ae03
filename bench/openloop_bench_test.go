package bench

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/stats"
	"github.com/tokenpulse/tokenpulse/stream"
)

// BenchmarkOpenLoopLag measures how late the open loop sends its
// requests (t_start less the scheduled instant) at 50 and 200 requests/s
// of Poisson arrivals against the in-process mock (5 ms TTFT, 8 tokens
// 1 ms apart), with the collector held as bench holds it. Reported: the
// lag's p50, p99 and max in ms over 400 requests per rate per iteration.
//
//	go test ./bench -run '^$' -bench OpenLoopLag -benchtime 1x
func BenchmarkOpenLoopLag(b *testing.B) {
	srv, err := server.New(mock.New(mock.Profile{TTFT: 5 * time.Millisecond, ITL: time.Millisecond, Tokens: 8, TokensPerEvent: 1}, nil),
		server.Options{Addr: "127.0.0.1:0", Parallel: 256})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	if err := srv.WarmUp(ctx); err != nil {
		b.Fatal(err)
	}
	client := &stream.Client{BaseURL: "http://" + ln.Addr().String(), API: "chat", Model: "mock"}
	const n = 400
	for _, rate := range []float64{50, 200} {
		b.Run(fmt.Sprintf("rate=%g", rate), func(b *testing.B) {
			var lags []float64
			errs := 0
			for i := 0; i < b.N; i++ {
				sched, err := Arrival{Process: ArrivalPoisson, Rate: rate, Max: n}.Schedule(uint64(i + 1))
				if err != nil {
					b.Fatal(err)
				}
				restore := stream.HoldGC()
				reqs, err := Run(ctx, Config{Client: client, Prompts: namedPrompts(repeat("p", n)...), Schedule: sched, Concurrency: 256, MaxTokens: 8,
					WarmupPrompts: namedPrompts("w")})
				restore()
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range reqs {
					if r.Warmup {
						continue
					}
					if !r.OK() {
						errs++
					}
					lags = append(lags, stats.Millis(r.ScheduleLagNS))
				}
			}
			slices.Sort(lags)
			b.ReportMetric(stats.Percentile(lags, 50), "lag-p50-ms")
			b.ReportMetric(stats.Percentile(lags, 99), "lag-p99-ms")
			b.ReportMetric(lags[len(lags)-1], "lag-max-ms")
			b.ReportMetric(float64(errs), "errors")
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", s, i)
	}
	return out
}
