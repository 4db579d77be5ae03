// Package launch brings tokenpulse's streaming server up in this process:
// listen, serve, warm up, and stop. `tokenpulse serve` starts its server
// here, and so does `tokenpulse bench` when it measures the embedded
// engine (no --url), so the two bring a server up the same way.
//
//	s, err := launch.New(backend, launch.Options{Server: server.Options{Addr: "127.0.0.1:0"}})
//	if err != nil { ... }             // bad options: nothing was started
//	if err := s.Start(ctx); err != nil { ... }
//	defer s.Stop()
//	fmt.Println(s.URL)
package launch

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/internal/server/embedded"
)

// Options configures a [Server].
type Options struct {
	// Server configures the server; Server.Addr is where it listens
	// ("127.0.0.1:0": a free loopback port).
	Server server.Options
	// Listening, when set, is called with the base URL once the port is
	// open and served, before the warm-up (which may take a while; /health
	// answers 503 until it is done).
	Listening func(url string)
}

// Server is a server in front of a backend, served on a port of this
// process. The caller keeps ownership of the backend.
type Server struct {
	// URL is the base URL ("http://127.0.0.1:PORT") once started.
	URL string

	srv    *server.Server
	o      Options
	cancel context.CancelFunc
	served chan error
	once   sync.Once
	err    error
}

// New builds the server in front of b; its error is one of the options
// (a non-loopback address without an API key, ...), and nothing is
// started.
func New(b server.Backend, o Options) (*Server, error) {
	srv, err := server.New(b, o.Server)
	if err != nil {
		return nil, err
	}
	return &Server{srv: srv, o: o}, nil
}

// Start listens on the options' address, serves there and warms the
// backend up; it returns once the server is ready (/health answers 200).
// ctx bounds the warm-up only: serving goes on until [Server.Stop] or
// [Server.Wait]'s context ends. When Start fails nothing is left running.
func (s *Server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.o.Server.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.o.Server.Addr, err)
	}
	s.URL = "http://" + ln.Addr().String()
	sctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.served = make(chan error, 1)
	go func() { s.served <- s.srv.Serve(sctx, ln) }()
	if s.o.Listening != nil {
		s.o.Listening(s.URL)
	}
	if err := s.srv.WarmUp(ctx); err != nil {
		s.Stop()
		return err
	}
	return nil
}

// Stop shuts the server down as SIGINT does (running streams get
// ShutdownGrace to finish, then they are aborted), waits for it, and
// returns the error serving ended with. It may be called more than once,
// and on a server that never started.
func (s *Server) Stop() error {
	s.once.Do(func() {
		if s.cancel == nil {
			return // never started
		}
		s.cancel()
		s.err = <-s.served
	})
	return s.err
}

// Wait serves until ctx ends, then stops the server; it returns early,
// with the error, when serving fails on its own.
func (s *Server) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case err := <-s.served:
		s.served <- err // for Stop
	}
	return s.Stop()
}

// Model says which model the embedded engine loads and how it runs.
type Model struct {
	// Path is the GGUF file ("" = the bundled model).
	Path string
	// Ctx is the context size (0 = min(2048, the model's own)).
	Ctx int
	// Threads per matrix product (0 = all cores).
	Threads int
	// Batch is the prefill batch size (0 = the engine's default).
	Batch int
	// Parallel is the number of requests generating at once (at least 1).
	Parallel int
	// KVType is the KV cache's element type ("" = f32).
	KVType engine.KVType
	// SpinWait is engine.Options.SpinWait.
	SpinWait time.Duration
	// NoRepack is engine.Options.NoRepack: weights stay in the file's
	// layout.
	NoRepack bool
	// NoPromptCache is embedded.Options.NoPromptCache: every prompt token
	// of every request is run.
	NoPromptCache bool
	// MaxMemory caps what the model, its Parallel KV caches and buffers
	// may take, in bytes (0 = the memory the machine has available); see
	// engine.Options.MaxMemory.
	MaxMemory uint64
	// Warn, when set, gets the engine's warnings (a context beyond the
	// model's own, ...).
	Warn func(msg string)
}

// LoadEmbedded loads m into the embedded engine's backend.
func LoadEmbedded(ctx context.Context, m Model) (*embedded.Backend, error) {
	return embedded.Load(ctx, embedded.Options{
		Engine: engine.Options{
			ModelPath: m.Path, Ctx: m.Ctx, Threads: m.Threads, BatchSize: m.Batch,
			MaxMemory: m.MaxMemory, Sessions: max(m.Parallel, 1), Warn: m.Warn,
			KVType: m.KVType, SpinWait: m.SpinWait, NoRepack: m.NoRepack,
		},
		Parallel: m.Parallel, NoPromptCache: m.NoPromptCache,
	})
}

// MeasuringThreads is the engine's thread count when the measuring
// client shares its process: the cores less one, which is left to the
// client so that its timestamps do not wait behind the engine's workers.
func MeasuringThreads() int { return max(runtime.NumCPU()-1, 1) }
