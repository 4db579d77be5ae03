package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/sse"
	"github.com/tokenpulse/tokenpulse/stats"
)

// pingPong is a backend that emits one token, then waits until the reader
// has it, so that each token's latency is measured alone, with no queue in
// front of it. It stamps each token as it calls emit and as emit returns,
// in slices the reader may read once done has delivered. It waits for the
// reader after the last token too, so that the reader can count the
// allocations of the tokens' path before the server ends the response.
type pingPong struct {
	ack  chan struct{} // the reader has the last token (unbuffered)
	done chan struct{} // Generate returned (buffered)
	emit []time.Time   // token i: just before emit (Piece.At)
	sent []time.Time   // token i: emit returned
}

func newPingPong(perStream int) *pingPong {
	return &pingPong{
		ack: make(chan struct{}), done: make(chan struct{}, 1),
		emit: make([]time.Time, perStream), sent: make([]time.Time, perStream),
	}
}

func (p *pingPong) Models() []string { return []string{"bench"} }

func (p *pingPong) Warmup(context.Context) (*api.Warmup, error) { return nil, nil }

func (p *pingPong) Generate(ctx context.Context, req *GenRequest, emit func(Piece) error) (GenResult, error) {
	defer func() { p.done <- struct{}{} }()
	n := req.MaxTokens
	for i := range n {
		if err := ctx.Err(); err != nil {
			return GenResult{}, err
		}
		at := time.Now()
		err := emit(Piece{Text: " token", At: at})
		p.emit[i], p.sent[i] = at, time.Now()
		if err != nil {
			return GenResult{}, err
		}
		select {
		case <-p.ack:
		case <-ctx.Done():
			return GenResult{}, ctx.Err()
		}
	}
	return GenResult{OutputTokens: n, FinishReason: "length"}, nil
}

// stampConn is a client connection that notes when each of its reads
// returned bytes: the moment the client process has them, beneath every
// buffer of the HTTP client.
type stampConn struct {
	net.Conn
	last time.Time
}

func (c *stampConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.last = time.Now()
	}
	return n, err
}

func (c *stampConn) lastRead() time.Time { return c.last }

// BenchmarkServerOverheadPerToken measures the server's own time per
// token. One op is one streamed /v1/completions request of 512 tokens over
// one keep-alive loopback connection; a backend emits a token only once
// the client has the previous one (ping-pong), so no token queues behind
// another. Per token it reports, as p50 and p99 over every token of the
// run:
//
//   - server_µs: from the backend's call of emit (the token's Piece.At)
//     to emit's return, which is when the event's bytes have been handed
//     to the kernel (Flush returned). It holds the server's whole
//     per-token path in the handler's goroutine: the context check, the
//     Prometheus observations, the chunk's JSON, the SSE frame, the write
//     deadline, net/http's chunked writer and the write system call, which
//     on loopback also carries the bytes into the client socket's receive
//     queue and wakes its reader. The goal (≤ 50 µs p99) is on
//     this figure.
//   - e2e_µs: from the same emit to the return of the client's read of
//     the socket that delivered the event's last byte (stamped beneath
//     the client's buffers, so the client's parsing is not counted). It
//     adds to server_µs the client goroutine's wake-up: the netpoller and
//     the Go scheduler of the same process, on a machine whose cores the
//     server shares.
//
// allocs/token counts the heap objects the whole process (server and
// client) allocated while the server sent each stream's tokens after the
// first (from the client's having token 0 to its having the last, with
// the server waiting at both ends; runtime.ReadMemStats, whose pause falls
// outside every measured interval), over those tokens: the harness
// allocates nothing of its own per token, so it is the per-token
// allocations of the server and of net/http's client reader. The first token of each stream also writes
// the response's headers; it is counted in the latencies like the rest.
func BenchmarkServerOverheadPerToken(b *testing.B) {
	const perStream = 512
	pp := newPingPong(perStream)
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

	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	conn := &stampConn{Conn: nc}
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	body := `{"prompt":"x","stream":true,"max_tokens":` + strconv.Itoa(perStream) + `}`
	request := []byte("POST /v1/completions HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	token := []byte(`"text":" token"`)

	got := make([]time.Time, perStream)
	server := make([]float64, 0, b.N*perStream)
	e2e := make([]float64, 0, b.N*perStream)
	var allocs uint64
	var ms runtime.MemStats
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := conn.Write(request); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		dec := sse.NewDecoder(resp.Body)
		dec.SetClock(conn.lastRead)
		for i := range perStream {
			ev, err := dec.NextRaw()
			if err != nil {
				b.Fatal(err)
			}
			got[i] = ev.At
			if !bytes.Contains(ev.Data, token) {
				b.Fatalf("event %d is not a token: %s", i, ev.Data)
			}
			switch i {
			case 0:
				runtime.ReadMemStats(&ms)
				allocs -= ms.Mallocs
			case perStream - 1:
				runtime.ReadMemStats(&ms)
				allocs += ms.Mallocs
			}
			pp.ack <- struct{}{}
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		<-pp.done
		for i := range perStream {
			server = append(server, float64(pp.sent[i].Sub(pp.emit[i]).Nanoseconds())/1e3)
			e2e = append(e2e, float64(got[i].Sub(pp.emit[i]).Nanoseconds())/1e3)
		}
	}
	b.StopTimer()
	slices.Sort(server)
	slices.Sort(e2e)
	b.ReportMetric(stats.Percentile(server, 50), "server_p50_µs/token")
	b.ReportMetric(stats.Percentile(server, 99), "server_p99_µs/token")
	b.ReportMetric(stats.Percentile(e2e, 50), "e2e_p50_µs/token")
	b.ReportMetric(stats.Percentile(e2e, 99), "e2e_p99_µs/token")
	b.ReportMetric(float64(allocs)/float64(b.N*(perStream-1)), "allocs/token")
}
