package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenpulse/tokenpulse/api"
)

// Defaults applied by [New] to zero fields of [Options].
const (
	DefaultParallel      = 1
	DefaultQueue         = 64
	DefaultMaxBodyBytes  = 1 << 20
	DefaultMaxTokens     = 256
	DefaultMaxTokenLimit = 8192
	DefaultShutdownGrace = 10 * time.Second
	DefaultAbortWait     = 5 * time.Second
	DefaultWriteTimeout  = 30 * time.Second
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 10 * time.Second
	DefaultIdleTimeout   = 30 * time.Second
	// DefaultMaxConns is lowered, when the process's open-file limit is
	// small, to fit in it (see [Options].MaxConns).
	DefaultMaxConns = 1024
)

// abortDrain bounds how long aborted streams may take to end their
// responses at shutdown.
const abortDrain = 5 * time.Second

// Options configures a [Server]. The zero value is usable: every zero field
// takes the default named beside it.
type Options struct {
	// Addr is the address the server is meant to listen on; it is only
	// checked here (a non-loopback address needs APIKey or Insecure).
	// [Server.Serve] checks the listener's address the same way.
	Addr string
	// Parallel is the number of requests generating at once (default 1).
	Parallel int
	// Queue is how many requests may wait for a slot (0 = DefaultQueue,
	// negative = none wait: a request finding every slot busy gets 429).
	Queue int
	// APIKey, when set, is required as "Authorization: Bearer KEY" on
	// every /v1 route. It may hold several keys separated by commas; a
	// caller can abort only requests made with its own key.
	APIKey string
	// Insecure allows a non-loopback Addr without an API key.
	Insecure bool
	// MaxBodyBytes limits a request body (default 1 MiB); larger bodies
	// get 413.
	MaxBodyBytes int64
	// DefaultMaxTokens is the output limit when a request names none
	// (default 256); MaxTokensLimit is the largest a request may ask for
	// (default 8192).
	DefaultMaxTokens, MaxTokensLimit int
	// ShutdownGrace is how long in-flight streams may run after shutdown
	// begins before they are aborted (default 10 s; negative = abort at
	// once).
	ShutdownGrace time.Duration
	// AbortWait bounds how long POST /v1/abort waits for the generation to
	// stop before answering (default 5 s).
	AbortWait time.Duration
	// WriteTimeout bounds each write to a client; a client that stops
	// reading for longer is dropped (default 30 s). A stream renews the
	// deadline at most every WriteTimeout/16, not per token, so a write
	// may wait up to 17/16 of it.
	WriteTimeout time.Duration
	// HeaderTimeout bounds reading a request's line and headers (default
	// 10 s).
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body, counted from the end
	// of its headers (default 10 s). A client that has not sent its whole
	// body by then gets 408 and its connection is closed. An answer given
	// without the body (401, 404, ...) does not wait for it.
	BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that waits longer than
	// this for its next request (default 30 s).
	IdleTimeout time.Duration
	// MaxConns caps the client connections [Server.Serve] keeps open
	// (0 = DefaultMaxConns, lowered to (open-file limit − 80) / 2 when
	// that is smaller; negative = no cap). A few connections beyond it
	// are still read for one request each, within HeaderTimeout, so that
	// /health answers while silent clients hold every slot (other routes
	// get 503 there); further connections get 503 at once and are
	// closed.
	MaxConns int
	// Pprof serves Go's profiles (net/http/pprof) on /debug/pprof/:
	// behind the API key when one is set, and refused on a non-loopback
	// address without one (see ErrPprofExposed).
	Pprof bool
	// Logger receives the server's logs (nil = discard).
	Logger *slog.Logger
	// Registry receives the server's metrics (nil = a registry of the
	// server's own, served on /metrics).
	Registry *prometheus.Registry
}

// Server is the streaming HTTP server. Build it with [New]; its methods
// are safe for concurrent use.
type Server struct {
	b       Backend
	o       Options
	keys    [][]byte // accepted API keys; empty = no auth
	log     *slog.Logger
	m       *metrics
	prom    *prometheus.Registry
	reg     *registry
	adm     *admission
	handler http.Handler

	warm     atomic.Pointer[api.Health]
	broken   atomic.Pointer[string] // why the backend can serve no more (see ErrBroken)
	inflight tracker                // request goroutines
	closing  atomic.Bool
}

// New builds a server in front of b. It refuses a non-loopback o.Addr
// without an API key unless o.Insecure is set.
func New(b Backend, o Options) (*Server, error) {
	if b == nil {
		return nil, errors.New("server: nil backend")
	}
	if o.Parallel == 0 {
		o.Parallel = DefaultParallel
	}
	if o.Parallel < 0 {
		return nil, fmt.Errorf("server: parallel must be at least 1, got %d", o.Parallel)
	}
	switch {
	case o.Queue == 0:
		o.Queue = DefaultQueue
	case o.Queue < 0:
		o.Queue = 0
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxTokensLimit <= 0 {
		o.MaxTokensLimit = DefaultMaxTokenLimit
	}
	if o.DefaultMaxTokens <= 0 {
		o.DefaultMaxTokens = min(DefaultMaxTokens, o.MaxTokensLimit)
	}
	if o.DefaultMaxTokens > o.MaxTokensLimit {
		return nil, fmt.Errorf("server: default max tokens %d exceeds the limit %d", o.DefaultMaxTokens, o.MaxTokensLimit)
	}
	if o.ShutdownGrace == 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	if o.AbortWait <= 0 {
		o.AbortWait = DefaultAbortWait
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxConns == 0 {
		o.MaxConns = defaultMaxConns()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{b: b, o: o, log: o.Logger, reg: newRegistry(), adm: newAdmission(o.Parallel, o.Queue)}
	for _, k := range strings.Split(o.APIKey, ",") {
		if k = strings.TrimSpace(k); k != "" {
			s.keys = append(s.keys, []byte(k))
		}
	}
	if o.Addr != "" {
		if err := s.checkExposure(o.Addr); err != nil {
			return nil, err
		}
		if err := s.checkPprof(o.Addr); err != nil {
			return nil, err
		}
	}
	reg := o.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("server: metrics: %w", err)
	}
	s.m, s.prom = m, reg
	s.warm.Store(&api.Health{Status: "warming", Model: first(b.Models()), Backend: kindOf(b)})
	s.handler = s.routes(reg)
	return s, nil
}

// defaultMaxConns is DefaultMaxConns, lowered to fit the process's
// open-file limit: a connection may need a second descriptor (a
// gateway's upstream request), and some are kept for the model file, the
// logs and the reserve connections.
func defaultMaxConns() int {
	n := DefaultMaxConns
	if lim := openFileLimit(); lim > 0 && lim < 1<<20 {
		n = min(n, max((int(lim)-64-reserveConns)/2, 8))
	}
	return n
}

func first(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}

// ErrExposed is returned for a non-loopback address with no API key and no
// Insecure option.
var ErrExposed = errors.New("server: refusing to listen beyond loopback without an API key (give one with --api-key-env, or pass --insecure)")

// checkExposure refuses a non-loopback address without an API key.
func (s *Server) checkExposure(addr string) error {
	if len(s.keys) > 0 || s.o.Insecure || IsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrExposed, addr)
}

// IsLoopback reports whether addr ("host:port" or a bare host) names only
// the loopback interface: "localhost" or a loopback IP. An empty host
// (all interfaces) and other names are not loopback.
func IsLoopback(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler returns the server's HTTP handler (all routes), for use with
// httptest or a server of the caller's own. [Server.Serve] uses it too.
func (s *Server) Handler() http.Handler { return s.handler }

// WarmUp runs the backend's warm-up; once it succeeds /health answers 200
// with the warm-up breakdown.
func (s *Server) WarmUp(ctx context.Context) error {
	start := time.Now()
	w, err := s.b.Warmup(ctx)
	if err != nil {
		s.warm.Store(&api.Health{Status: "failed", Model: first(s.b.Models()), Backend: kindOf(s.b)})
		return fmt.Errorf("server: warm-up: %w", err)
	}
	if w == nil {
		w = &api.Warmup{}
	}
	if w.TotalNS == 0 {
		w.TotalNS = int64(time.Since(start))
	}
	s.warm.Store(&api.Health{Status: "ready", Model: first(s.b.Models()), Backend: kindOf(s.b), Warmup: w})
	s.log.Info("warm-up done", "total", time.Duration(w.TotalNS))
	return nil
}

// Serve serves on ln until ctx is done, then shuts down gracefully: it
// stops accepting, lets in-flight requests run until ShutdownGrace, aborts
// the rest, and returns once every request goroutine has returned. It
// refuses a non-loopback listener without an API key unless Insecure.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.checkExposure(ln.Addr().String()); err != nil {
		ln.Close()
		return err
	}
	if err := s.checkPprof(ln.Addr().String()); err != nil {
		ln.Close()
		return err
	}
	if s.o.MaxConns > 0 {
		ln = &limitListener{Listener: ln, max: s.o.MaxConns, reserve: reserveConns, deadline: s.o.HeaderTimeout, m: s.m}
	}
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.o.HeaderTimeout,
		IdleTimeout:       s.o.IdleTimeout,
		ConnContext:       connContext,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String())

	select {
	case err := <-errc:
		// The listener failed on its own: abort what runs and wait.
		s.closing.Store(true)
		s.reg.cancelAll(errShutdown)
		s.inflight.wait()
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	s.closing.Store(true)
	if n := s.reg.cancelQueued(errShutdown); n > 0 {
		s.log.Info("shutting down: queued requests turned away", "requests", n)
	}
	s.log.Info("shutting down", "grace", s.o.ShutdownGrace)
	grace := max(s.o.ShutdownGrace, 0)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	err := hs.Shutdown(sctx)
	cancel()
	if err != nil {
		// Grace is over: abort the streams still running, and give them a
		// moment to write their last events and end their responses.
		n := s.reg.cancelAll(errShutdown)
		s.log.Warn("grace over, aborting in-flight requests", "requests", n)
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortDrain)
		hs.Shutdown(dctx)
		cancel()
	}
	// Whatever is left (a client still sending its body) is cut off.
	hs.Close()
	s.inflight.wait()
	<-errc
	return nil
}

// markBroken records that the backend can serve no further request:
// /health answers 503 with err as the reason from now on, and new
// completions are refused. The first reason is kept.
func (s *Server) markBroken(err error) {
	reason := err.Error()
	if s.broken.CompareAndSwap(nil, &reason) {
		s.log.Error("backend broken: the server is unhealthy until restarted", "err", err)
	}
}

// tracker counts running request goroutines. Unlike a sync.WaitGroup it
// may gain members while someone waits for it to drain (a keep-alive
// connection can start a request as shutdown begins).
type tracker struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
}

func (t *tracker) add(d int) {
	t.mu.Lock()
	if t.cond == nil {
		t.cond = sync.NewCond(&t.mu)
	}
	t.n += d
	if t.n == 0 {
		t.cond.Broadcast()
	}
	t.mu.Unlock()
}

// wait returns once no request goroutine runs.
func (t *tracker) wait() {
	t.mu.Lock()
	if t.cond == nil {
		t.cond = sync.NewCond(&t.mu)
	}
	for t.n > 0 {
		t.cond.Wait()
	}
	t.mu.Unlock()
}

// authorize checks the bearer key in constant time and returns the hash of
// the key presented (zero when no keys are configured).
func (s *Server) authorize(r *http.Request) (hash [32]byte, ok bool) {
	if len(s.keys) == 0 {
		return hash, true
	}
	auth := r.Header.Get("Authorization")
	tok, found := strings.CutPrefix(auth, "Bearer ")
	if !found {
		return hash, false
	}
	tok = strings.TrimSpace(tok)
	match := 0
	for _, k := range s.keys {
		match |= subtle.ConstantTimeCompare([]byte(tok), k)
	}
	if match != 1 {
		return hash, false
	}
	return sha256.Sum256([]byte(tok)), true
}
