package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/launch"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/internal/server/gateway"
)

func init() { commands = append(commands, newServeCmd) }

// serveFlags are the flags of `tokenpulse serve`.
type serveFlags struct {
	model, addr                string
	ctx, threads, batch        int
	maxMemory                  byteSize
	parallel, queue            int
	keyEnv                     string
	insecure                   bool
	upstream, upKeyEnv, upName string
	maxTokens, maxTokensLimit  int
	maxBody                    int64
	grace                      time.Duration
	headerTimeout, bodyTimeout time.Duration
	idleTimeout, upTimeout     time.Duration
	maxConns                   int
	verbose                    bool
	kvType                     kvTypeFlag
	spinWait                   time.Duration
	pprof                      bool
	repack                     bool
	cache                      bool
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve an OpenAI-compatible streaming endpoint on the embedded engine, or as a gateway",
		Long: `Serve the OpenAI-compatible streaming API (/v1/chat/completions,
/v1/completions, /v1/models) with tokenpulse's stream contract: "retry: 0"
first, the request id on every event, one token per event, the server's
emit time on every event, usage and timings (queue, prefill, decode) at the
end, and a real abort (POST /v1/abort?request_id=ID, or the client leaving)
that stops generation before the next token.

With no --model the bundled stories260K model is served. With --upstream the
same contract is served in front of another OpenAI-compatible runtime
(llama.cpp's llama-server, Ollama, vLLM): its multi-token chunks are split
into one event per token where the count is known, and an abort closes the
upstream request so the runtime stops.

/health answers 503 until warm-up (weights paged in, KV cache allocated,
one token generated) is done, then 200 with the warm-up breakdown.
/metrics serves Prometheus metrics: TTFT, per-token gap, queue time and
end-to-end histograms, token, request and abort counters.

A client gets --header-timeout to send its headers and --body-timeout to
send its body; idle keep-alive connections close after --idle-timeout. At
most --max-conns connections are kept open; beyond them /health is still
answered and other requests get 503 at once.

A non-loopback --addr needs an API key (--api-key-env) unless --insecure.
--pprof serves Go's profiles on /debug/pprof/ (bench --profile takes the
CPU profile of a run from there): on a loopback --addr, or behind the API
key; --insecure does not lift that.
SIGINT or SIGTERM shuts down gracefully: running streams get
--shutdown-grace to finish, then they are aborted.`,
		Example: `  tokenpulse serve
  tokenpulse serve --model ~/models/SmolLM2-135M-Instruct-Q8_0.gguf --ctx 2048 --parallel 2
  tokenpulse serve --upstream http://127.0.0.1:8081 --addr 127.0.0.1:8080
  TP_KEY=secret tokenpulse serve --addr 0.0.0.0:8080 --api-key-env TP_KEY`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, f) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.model, "model", "", "GGUF model file to serve (default: the bundled stories260K)")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on (a non-loopback address needs an API key or --insecure)")
	fs.IntVar(&f.ctx, "ctx", 0, "context size in tokens (0 = min(2048, the model's own); more than the model's own is allowed with a warning, within --max-memory)")
	fs.Var(&f.maxMemory, "max-memory", maxMemoryUsage)
	fs.IntVar(&f.threads, "threads", 0, "threads per matrix product (0 = all cores)")
	fs.IntVar(&f.batch, "batch", 0, "prompt tokens computed together in prefill (0 = the engine's default)")
	fs.Var(&f.kvType, "kv-type", kvTypeUsage)
	fs.BoolVar(&f.repack, "repack", true, repackUsage)
	fs.BoolVar(&f.cache, "prompt-cache", true, promptCacheUsage)
	fs.DurationVar(&f.spinWait, "spin-wait", 0, spinWaitUsage)
	fs.IntVar(&f.parallel, "parallel", 1, "requests generating at once (1 keeps the embedded engine's token gaps steady on a CPU; with --upstream the default is 64)")
	fs.IntVar(&f.queue, "queue", 16, "requests that may wait for a slot; more get 429 (negative = none wait)")
	fs.StringVar(&f.keyEnv, "api-key-env", "", "name of the environment variable holding the API key(s) to require (comma-separated keys)")
	fs.BoolVar(&f.insecure, "insecure", false, "allow a non-loopback address without an API key")
	fs.StringVar(&f.upstream, "upstream", "", "serve as a gateway in front of this OpenAI-compatible base URL instead of the embedded engine")
	fs.StringVar(&f.upKeyEnv, "upstream-key-env", "", "name of the environment variable holding the upstream's API key")
	fs.StringVar(&f.upName, "upstream-model", "", "model to announce and default to in gateway mode (default: the upstream's first)")
	fs.DurationVar(&f.upTimeout, "upstream-timeout", 0, "with --upstream, how long to wait for the upstream's response headers before answering 504 (0 = no bound)")
	fs.IntVar(&f.maxTokens, "max-tokens", server.DefaultMaxTokens, "output tokens when a request names no max_tokens")
	fs.IntVar(&f.maxTokensLimit, "max-tokens-limit", server.DefaultMaxTokenLimit, "largest max_tokens a request may ask for")
	fs.Int64Var(&f.maxBody, "max-body", server.DefaultMaxBodyBytes, "largest request body in bytes (larger: 413)")
	fs.DurationVar(&f.grace, "shutdown-grace", server.DefaultShutdownGrace, "how long running streams may finish after SIGINT/SIGTERM before they are aborted")
	fs.DurationVar(&f.headerTimeout, "header-timeout", server.DefaultHeaderTimeout, "how long a client may take to send a request's headers")
	fs.DurationVar(&f.bodyTimeout, "body-timeout", server.DefaultBodyTimeout, "how long a client may take to send a request's body after its headers (slower: 408, connection closed)")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", server.DefaultIdleTimeout, "how long an idle keep-alive connection is kept open")
	fs.IntVar(&f.maxConns, "max-conns", 0, fmt.Sprintf("client connections kept open at once; beyond it /health is still answered, other requests get 503 (0 = %d, or less to fit the open-file limit; negative = no cap)", server.DefaultMaxConns))
	fs.BoolVar(&f.verbose, "verbose", false, "log each request")
	fs.BoolVar(&f.pprof, "pprof", false, "serve Go's profiles on /debug/pprof/ (for bench --profile): on a loopback --addr, or behind the API key")
	return cmd
}

func (f serveFlags) check() error {
	switch {
	case f.parallel < 1:
		return fmt.Errorf("--parallel must be at least 1, got %d", f.parallel)
	case f.ctx < 0 || f.threads < 0 || f.batch < 0:
		return errors.New("--ctx, --threads and --batch must not be negative")
	case f.maxTokens < 1 || f.maxTokensLimit < 1 || f.maxTokens > f.maxTokensLimit:
		return fmt.Errorf("--max-tokens %d must be between 1 and --max-tokens-limit %d", f.maxTokens, f.maxTokensLimit)
	case f.maxBody < 1:
		return fmt.Errorf("--max-body must be positive, got %d", f.maxBody)
	case f.upTimeout < 0:
		return errors.New("--upstream-timeout must not be negative")
	case f.headerTimeout <= 0 || f.bodyTimeout <= 0 || f.idleTimeout <= 0:
		return errors.New("--header-timeout, --body-timeout and --idle-timeout must be positive")
	case f.upstream != "" && f.model != "":
		return errors.New("--model and --upstream exclude each other")
	}
	return nil
}

// envKey reads the variable named by a --*-env flag ("" when no flag).
func envKey(flag, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	v := os.Getenv(name)
	if v == "" {
		return "", fmt.Errorf("%s %s: the variable is empty or unset", flag, name)
	}
	return v, nil
}

// gatewayParallel is --parallel's default in front of an upstream runtime.
const gatewayParallel = 64

func runServe(cmd *cobra.Command, f serveFlags) error {
	if f.upstream != "" && !cmd.Flags().Changed("parallel") {
		// The upstream runtime batches and queues itself; one slot here
		// would serialise what it can serve at once.
		f.parallel = gatewayParallel
	}
	if err := f.check(); err != nil {
		return usageErr(err)
	}
	apiKey, err := envKey("--api-key-env", f.keyEnv)
	if err != nil {
		return usageErr(err)
	}
	upKey, err := envKey("--upstream-key-env", f.upKeyEnv)
	if err != nil {
		return usageErr(err)
	}
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	opts := server.Options{
		Addr: f.addr, Parallel: f.parallel, Queue: f.queue, APIKey: apiKey, Insecure: f.insecure,
		MaxBodyBytes: f.maxBody, DefaultMaxTokens: f.maxTokens, MaxTokensLimit: f.maxTokensLimit,
		ShutdownGrace: f.grace, Logger: log,
		HeaderTimeout: f.headerTimeout, BodyTimeout: f.bodyTimeout, IdleTimeout: f.idleTimeout, MaxConns: f.maxConns,
		Pprof: f.pprof,
	}
	if f.queue == 0 {
		opts.Queue = -1 // the flag's 0 means no queue
	}
	// Refuse an exposed address before loading anything.
	if !server.IsLoopback(f.addr) && apiKey == "" && !f.insecure {
		return usageErr(fmt.Errorf("%w: %s", server.ErrExposed, f.addr))
	}
	if f.pprof && !server.IsLoopback(f.addr) && apiKey == "" {
		return usageErr(fmt.Errorf("--pprof: %w: %s", server.ErrPprofExposed, f.addr))
	}

	ctx, stop := shutdownOnSignals(cmd.Context(), "serve", cmd.ErrOrStderr())
	defer stop()

	var (
		backend server.Backend
		what    string
	)
	if f.upstream != "" {
		g, err := gateway.New(gateway.Options{URL: f.upstream, APIKey: upKey, Model: f.upName, HeaderTimeout: f.upTimeout})
		if err != nil {
			return usageErr(err)
		}
		backend, what = g, "gateway to "+f.upstream
	} else {
		b, err := launch.LoadEmbedded(ctx, launch.Model{Path: f.model, Ctx: f.ctx, Threads: f.threads, Batch: f.batch, Parallel: f.parallel,
			MaxMemory: uint64(f.maxMemory), Warn: warnTo(cmd.ErrOrStderr()),
			KVType: engine.KVType(f.kvType), SpinWait: f.spinWait, NoRepack: !f.repack, NoPromptCache: !f.cache})
		if err != nil {
			return err
		}
		defer b.Close()
		backend, what = b, fmt.Sprintf("model %s (context %d, kernels %s)", b.Models()[0], b.Model().Ctx(), b.Model().Kernels())
	}
	out := cmd.OutOrStdout()
	srv, err := launch.New(backend, launch.Options{
		Server: opts,
		Listening: func(url string) {
			fmt.Fprintf(out, "tokenpulse serve: %s on %s, warming up (/health is 503 until ready)\n", what, url)
			fmt.Fprintf(out, "tokenpulse serve: chat page at %s/\n", url)
		},
	})
	if err != nil {
		return usageErr(err)
	}
	if err := srv.Start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // SIGINT or SIGTERM during warm-up
		}
		return err
	}
	fmt.Fprintf(out, "tokenpulse serve: ready; Ctrl-C stops\n")
	if err := srv.Wait(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "tokenpulse serve: stopped")
	return nil
}
