package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

func init() { commands = append(commands, newMockCmd) }

// mockParallel is the mock's default number of concurrent streams: it
// computes nothing, so it can serve many.
const mockParallel = 1024

func newMockCmd() *cobra.Command {
	p := mock.DefaultProfile()
	var (
		addr     string
		parallel int
		queue    int
		insecure bool
		keyEnv   string
		verbose  bool
	)
	cmd := &cobra.Command{
		Use:   "mock",
		Short: "Serve a scripted streaming target with a timing profile (ground truth for tests)",
		Long: `Serve the OpenAI-compatible streaming API with tokenpulse's stream contract,
backed by a script instead of a model: tokens are lorem-like words paced on
a timing profile (time to first token, inter-token latency, jitter, stalls,
several tokens per event, a slower first request, errors at a rate, a
reasoning model's thinking streamed as delta.reasoning_content before the
answer). Every
event carries its server emit time (tokenpulse.server_ns), so a client's
measurements can be checked against ground truth.

Jitter is uniform in [-jitter, +jitter] on each event's deadline. An
injected error is a 500 server_error answered before any token.

SIGINT or SIGTERM shuts down gracefully: running streams get 10 s to
finish, then they are aborted; a second signal exits at once.`,
		Example: `  tokenpulse mock --addr 127.0.0.1:8081 --ttft 150ms --itl 20ms --tokens 30
  tokenpulse mock --stall 400ms --stall-every 10 --stall-match compare
  tokenpulse mock --tokens-per-event 4 --cold-extra 2s --error-rate 0.05 --seed 7
  tokenpulse mock --reasoning-tokens 40 --reasoning-itl 10ms   # a reasoning model: thinking first`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := p.Validate(); err != nil {
				return usageErr(err)
			}
			if parallel < 1 {
				return usageErr(fmt.Errorf("--parallel must be at least 1, got %d", parallel))
			}
			var apiKey string
			if keyEnv != "" {
				apiKey = os.Getenv(keyEnv)
				if apiKey == "" {
					return usageErr(fmt.Errorf("--api-key-env %s: the variable is empty or unset", keyEnv))
				}
			}
			level := slog.LevelWarn
			if verbose {
				level = slog.LevelInfo
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			srv, err := server.New(mock.New(p, nil), server.Options{
				Addr: addr, Parallel: parallel, Queue: queue,
				APIKey: apiKey, Insecure: insecure, Logger: log,
			})
			if err != nil {
				return usageErr(err)
			}
			ctx, stop := shutdownOnSignals(cmd.Context(), "mock", cmd.ErrOrStderr())
			defer stop()
			if err := srv.WarmUp(ctx); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("mock: %w", err)
			}
			thinking := ""
			if p.ReasoningTokens > 0 {
				thinking = fmt.Sprintf(" after %d thinking tokens", p.ReasoningTokens)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "tokenpulse mock serving on http://%s (ttft %v, itl %v, %d tokens%s); Ctrl-C stops\n",
				ln.Addr(), p.TTFT, p.ITL, p.Tokens, thinking)
			if err := srv.Serve(ctx, ln); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&addr, "addr", "127.0.0.1:8081", "address to listen on (a non-loopback address needs an API key or --insecure)")
	fs.IntVar(&parallel, "parallel", mockParallel, "streams served at once")
	fs.IntVar(&queue, "queue", 0, "requests that may wait for a stream slot (0 = the server's default, negative = none)")
	fs.BoolVar(&insecure, "insecure", false, "allow a non-loopback address without an API key")
	fs.StringVar(&keyEnv, "api-key-env", "", "name of the environment variable holding the API key to require")
	fs.BoolVar(&verbose, "verbose", false, "log each request")
	p.AddFlags(fs)
	return cmd
}
