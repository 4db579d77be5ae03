package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

func init() { commands = append(commands, newGenerateCmd) }

func newGenerateCmd() *cobra.Command {
	var opts engine.Options
	var maxMemory byteSize
	var p engine.Params
	var prompt string
	var chat bool
	repack := true
	cmd := &cobra.Command{
		Use:   "generate --prompt TEXT",
		Short: "Stream a completion from the embedded engine and print its timings",
		Long: `Stream a completion from the embedded pure-Go engine: tokens go to stdout as
they are produced, then the timings (load and warm-up, prefill and decode
speed, TTFT, TPOT mean/std/p95/max) go to stderr. Without --model the
bundled stories260K model is used.

  tokenpulse generate --prompt "Once upon a time"
  tokenpulse generate --model m.gguf --prompt "Hello" -n 64 --temp 0.8 --top-p 0.95 --seed 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if prompt == "" {
				return usageErr(errors.New("--prompt is required"))
			}
			if p.MaxTokens < 0 || opts.Ctx < 0 || opts.Threads < 0 || opts.BatchSize < 0 {
				return usageErr(errors.New("-n, --ctx, --threads and --batch must not be negative"))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			opts.MaxMemory = uint64(maxMemory)
			opts.NoRepack = !repack
			opts.Warn = warnTo(cmd.ErrOrStderr())
			return runGenerate(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), opts, p, prompt, chat)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ModelPath, "model", "", "GGUF model file (default: the bundled stories260K)")
	fl.StringVar(&prompt, "prompt", "", "prompt text")
	fl.BoolVar(&chat, "chat", false, "wrap the prompt as a user message in the model's chat template")
	fl.IntVarP(&p.MaxTokens, "max-tokens", "n", 128, "tokens to generate (0 = until the context is full)")
	fl.Float32Var(&p.Temperature, "temp", 0, "sampling temperature (0 = greedy)")
	fl.IntVar(&p.TopK, "top-k", 0, "keep the K most likely tokens (0 = all)")
	fl.Float32Var(&p.TopP, "top-p", 1, "nucleus sampling mass (1 = off)")
	fl.Float32Var(&p.MinP, "min-p", 0, "drop tokens below this fraction of the top probability")
	fl.Float32Var(&p.RepeatPenalty, "repeat-penalty", 1, "penalty on recently seen tokens (1 = off)")
	fl.Uint64Var(&p.Seed, "seed", 0, "sampling seed")
	fl.IntVar(&opts.Threads, "threads", 0, "worker threads (0 = number of CPUs)")
	fl.IntVar(&opts.Ctx, "ctx", 0, "context size (0 = min(2048, the model's); more than the model's own is allowed, with a warning)")
	fl.IntVar(&opts.BatchSize, "batch", 0, "prompt prefill batch size (0 = default)")
	fl.Var(&maxMemory, "max-memory", maxMemoryUsage)
	fl.Var((*kvTypeFlag)(&opts.KVType), "kv-type", kvTypeUsage)
	fl.BoolVar(&repack, "repack", true, repackUsage)
	fl.DurationVar(&opts.SpinWait, "spin-wait", 0, spinWaitUsage)
	return cmd
}

func runGenerate(ctx context.Context, stdout, stderr io.Writer, opts engine.Options, p engine.Params, prompt string, chat bool) error {
	m, err := engine.Load(ctx, opts)
	if errors.Is(err, engine.ErrOption) {
		return usageErr(err)
	}
	if err != nil {
		return err
	}
	defer m.Close()
	warm, err := m.Warmup(ctx)
	if err != nil {
		return err
	}
	text := prompt
	if chat {
		text = m.ApplyChat([]engine.Message{{Role: "user", Content: prompt}})
	}
	ids := m.Tokenizer().Encode(text, true, chat)
	if p.MaxTokens > 0 && len(ids)+p.MaxTokens > m.Ctx() {
		p.MaxTokens = max(1, m.Ctx()-len(ids))
	}
	s := m.NewSession()
	var times []int64
	start := time.Now()
	res, err := s.Generate(ctx, ids, p, func(t engine.Token) error {
		times = append(times, t.At.Sub(start).Nanoseconds())
		_, err := io.WriteString(stdout, printable(t.Text))
		return err
	})
	fmt.Fprintln(stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		if errors.Is(err, engine.ErrContextFull) {
			return usageErr(err)
		}
		return err
	}
	printTimings(stderr, m.Info(), warm, res, times)
	return nil
}

func printTimings(w io.Writer, info engine.Info, warm engine.Warmup, res engine.Result, times []int64) {
	model := info.Path
	if info.Bundled {
		model = "bundled stories260K"
	}
	fmt.Fprintf(w, "\nmodel     %s (%s, %s params, %s), ctx %d, %d thread%s, KV cache %s\n", model, info.Arch, fmtCount(info.Params), info.Quantization, info.Ctx, info.Threads, map[bool]string{true: "", false: "s"}[info.Threads == 1], info.KVType)
	fmt.Fprintf(w, "kernels   %s\n", info.Kernels)
	fmt.Fprintf(w, "load      %s (warm-up: page-in %s, KV init %s, first forward %s)\n",
		ms(warm.Load), ms(warm.PageIn), ms(warm.KVInit), ms(warm.FirstForward))
	fmt.Fprintf(w, "prefill   %d tokens in %s: %.1f tok/s\n", res.PromptTokens, ms(res.Prefill), perSec(res.PromptTokens, res.Prefill))
	fmt.Fprintf(w, "decode    %d tokens in %s: %.1f tok/s (stop: %s)\n", res.OutputTokens, ms(res.Decode), perSec(res.OutputTokens, res.Decode), res.StopReason)
	// The figures of one request, as measure derives every run's: each
	// engine token is one event of one token.
	v := measure.Of(&runfile.Request{Status: 200, TTFTNS: firstOf(times), TokenTimesNS: times, OutputTokens: len(times), TokenSource: runfile.TokensServer, TokenCounts: ones(len(times))}, stats.DefaultDisplay)
	if v.HasTTFT {
		fmt.Fprintf(w, "TTFT      %.3f ms\n", v.TTFTMs)
	}
	if v.HasTPOT {
		d := stats.Describe(v.Values(measure.TokenInterval))
		fmt.Fprintf(w, "TPOT      mean %.3f ms, std %.3f ms (%.1f%%), p95 %.3f ms, max %.3f ms\n",
			v.TPOTMs, d.Std, 100*d.Std/d.Mean, d.P95, d.Max)
	}
}

// firstOf is the first of times, 0 for none.
func firstOf(times []int64) int64 {
	if len(times) == 0 {
		return 0
	}
	return times[0]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func perSec(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func fmtCount(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// printable replaces control characters other than newline and tab with
// U+FFFD, so that a random-weight model's output cannot drive the
// terminal (escape sequences, bells, carriage returns).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return '\uFFFD'
	}, s)
}

// ones is n counts of one token: each engine token is one event.
func ones(n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = 1
	}
	return c
}
