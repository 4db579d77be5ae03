package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"time"

	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/internal/server/embedded"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// embeddedFlags configure the server bench starts when no --url is given.
type embeddedFlags struct {
	model    string
	ctx      int
	threads  int
	batch    int
	parallel int
}

func (e *embeddedFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&e.model, "model", "", "GGUF model for the embedded server (default: the bundled stories260K); ignored with --url")
	fl.IntVar(&e.ctx, "ctx", 0, "context size of the embedded server (default min(2048, the model's own); the bundled model's own is 512)")
	fl.IntVar(&e.threads, "threads", 0, "threads of the embedded engine (default: the number of cores less one, which is left to the measuring client)")
	fl.IntVar(&e.batch, "batch", 0, "prompt batch size of the embedded engine (default 32)")
	fl.IntVar(&e.parallel, "parallel", 1, "requests the embedded server generates at once (the rest queue)")
}

// embeddedTarget is a running in-process server on a loopback port.
type embeddedTarget struct {
	target    runfile.Target
	coldStart *runfile.ColdStart
	close     func()
}

// startEmbedded loads the model, starts the server on a free loopback
// port, waits for its warm-up and reads the warm-up breakdown from /health,
// as any client of a freshly started server would.
func startEmbedded(ctx context.Context, f embeddedFlags) (*embeddedTarget, error) {
	t0 := time.Now()
	threads := f.threads
	if threads <= 0 {
		// The client shares this process: a core of its own keeps its
		// timestamps from waiting behind the engine's workers.
		threads = max(runtime.NumCPU()-1, 1)
	}
	b, err := embedded.Load(ctx, embedded.Options{
		Engine:   engine.Options{ModelPath: f.model, Ctx: f.ctx, Threads: threads, BatchSize: f.batch},
		Parallel: f.parallel,
	})
	if err != nil {
		return nil, err
	}
	srv, err := server.New(b, server.Options{Addr: "127.0.0.1:0", Parallel: max(f.parallel, 1)})
	if err != nil {
		b.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("embedded server: %w", err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	stop := func() {
		cancel()
		<-served
		b.Close()
	}
	if err := srv.WarmUp(ctx); err != nil {
		stop()
		return nil, fmt.Errorf("embedded server warm-up: %w", err)
	}
	ready := time.Since(t0)
	url := "http://" + ln.Addr().String()

	info := b.Model().Info()
	file := info.Path
	if info.Bundled {
		file = "bundled:" + embedded.BundledName
	}
	t := &embeddedTarget{
		target: runfile.Target{
			URL: url, Model: b.Models()[0], Backend: "embedded",
			ModelFile: file, ModelSHA256: info.SHA256, Quantization: info.Quantization,
			ContextLength: info.Ctx, Threads: info.Threads, BatchSize: info.Batch,
		},
		close: stop,
	}
	c := &stream.Client{BaseURL: url}
	status, h, err := c.Health(ctx)
	if err != nil || status != http.StatusOK {
		stop()
		return nil, fmt.Errorf("embedded server not ready after warm-up (status %d): %v", status, err)
	}
	t.coldStart = coldStartFrom(h.Warmup)
	if t.coldStart == nil {
		t.coldStart = &runfile.ColdStart{}
	}
	t.coldStart.ProcessStartMS = float64(ready) / 1e6
	return t, nil
}

// coldStartFrom converts a server's warm-up breakdown; nil stays nil.
func coldStartFrom(w *api.Warmup) *runfile.ColdStart {
	if w == nil {
		return nil
	}
	return &runfile.ColdStart{
		LoadMS:         float64(w.LoadNS) / 1e6,
		PageInMS:       float64(w.PageInNS) / 1e6,
		KVInitMS:       float64(w.KVInitNS) / 1e6,
		FirstForwardMS: float64(w.FirstForwardNS) / 1e6,
		TotalMS:        float64(w.TotalNS) / 1e6,
	}
}
