package launch

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/internal/profiling"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/internal/server/embedded"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// Target is the embedded engine served on a free loopback port, as a
// benchmark's target.
type Target struct {
	*Server
	Backend *embedded.Backend
	// Target describes it for the run file (API left to the caller).
	Target runfile.Target
	// ColdStart is its warm-up breakdown as /health gives it, with
	// ProcessStartMS: from the start of the load to ready.
	ColdStart *runfile.ColdStart
}

// StartTarget loads m (Threads 0: [MeasuringThreads]), serves it on a
// free loopback port, waits for its warm-up and reads the warm-up
// breakdown from /health, as any client of a freshly started server
// would. Close it when done.
//
// The server's goroutines (its connections and the engine's workers)
// carry the profiling label of the server (see package profiling), so
// that a CPU profile of this process, which also runs the measuring
// client, can keep the server's samples apart.
func StartTarget(ctx context.Context, m Model) (t *Target, err error) {
	profiling.Server(ctx, func(ctx context.Context) { t, err = startTarget(ctx, m) })
	return t, err
}

func startTarget(ctx context.Context, m Model) (*Target, error) {
	t0 := time.Now()
	if m.Threads <= 0 {
		m.Threads = MeasuringThreads()
	}
	b, err := LoadEmbedded(ctx, m)
	if err != nil {
		return nil, err
	}
	s, err := New(b, Options{Server: server.Options{Addr: "127.0.0.1:0", Parallel: max(m.Parallel, 1)}})
	if err != nil {
		b.Close()
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("embedded server: %w", err)
	}
	ready := time.Since(t0)
	t := &Target{Server: s, Backend: b}
	info := b.Model().Info()
	file := info.Path
	if info.Bundled {
		file = "bundled:" + embedded.BundledName
	}
	t.Target = runfile.Target{
		URL: s.URL, Model: b.Models()[0], Backend: "embedded",
		ModelFile: file, ModelSHA256: info.SHA256, Quantization: info.Quantization,
		ContextLength: info.Ctx, Threads: info.Threads, BatchSize: info.Batch,
		Kernels: info.Kernels,
	}
	c := &stream.Client{BaseURL: s.URL}
	status, h, err := c.Health(ctx)
	if err != nil || status != http.StatusOK {
		t.Close()
		return nil, fmt.Errorf("embedded server not ready after warm-up (status %d): %v", status, err)
	}
	t.ColdStart = bench.ColdStart(h.Warmup)
	if t.ColdStart == nil {
		t.ColdStart = &runfile.ColdStart{}
	}
	t.ColdStart.ProcessStartMS = float64(ready) / 1e6
	return t, nil
}

// Close stops the server and closes the model.
func (t *Target) Close() {
	t.Stop()
	t.Backend.Close()
}
