package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/suite"
	"github.com/tokenpulse/tokenpulse/tokencount"
	"github.com/tokenpulse/tokenpulse/trace"
)

// traceFlags replay a production trace (bench --trace): one more arrival
// process of the open loop.
type traceFlags struct {
	file   string
	format string
	speed  float64
	window string

	// Resolved by plan: the scanned replay (at speed 1), the
	// vocabulary's counter when the plan opened one of its own, and
	// what is recorded of the trace.
	replay *trace.Replay
	own    *tokencount.Counter
	config runfile.TraceConfig
}

// bundledCtx is the bundled model's context: the embedded server's
// without --model and --ctx.
const bundledCtx = 512

func (t *traceFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&t.file, "trace", "", "replay a production trace: each request sent at its recorded time from the run's start, with a prompt of exactly its recorded input length (in --tokenizer's vocabulary, the embedded model's, or the bundled one) and max_tokens its output length, with ignore_eos unless --ignore-eos=false")
	fl.StringVar(&t.format, "trace-format", "auto", "with --trace, its format: auto (told from the first line), mooncake (JSONL), azure or burstgpt (CSV)")
	fl.Float64Var(&t.speed, "trace-speed", 1, "with --trace, divide the recorded times by this (2 replays twice as fast)")
	fl.StringVar(&t.window, "trace-window", "", "with --trace, replay the slice FROM,TO of the trace's own time (e.g. 10m,20m; TO may be left out), times counted from FROM")
}

// on reports whether the run replays a trace.
func (t *traceFlags) on() bool { return t.file != "" }

// check refuses the trace flags without --trace, and what a replay
// cannot take.
func (t *traceFlags) check(fs *pflag.FlagSet, f *benchFlags) error {
	if !t.on() {
		for _, n := range []string{"trace-format", "trace-speed", "trace-window"} {
			if fs.Changed(n) {
				return fmt.Errorf("--%s needs --trace", n)
			}
		}
		return nil
	}
	for _, n := range []string{"rate", "arrival", "burstiness", "duration", "ramp", "scenario", "max-tokens", "requests"} {
		if fs.Changed(n) {
			return fmt.Errorf("--trace replays the trace's own arrivals and lengths: it takes no --%s", n)
		}
	}
	if f.browser.on {
		return errors.New("--trace cannot be replayed through a browser page")
	}
	return nil
}

// parseWindow reads FROM,TO (durations; TO may be empty).
func parseWindow(s string) (from, to time.Duration, err error) {
	if strings.TrimSpace(s) == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return 0, 0, fmt.Errorf("--trace-window %q: want FROM,TO, e.g. 10m,20m", s)
	}
	if from, err = time.ParseDuration(strings.TrimSpace(a)); err != nil {
		return 0, 0, fmt.Errorf("--trace-window %q: FROM: %w", s, err)
	}
	if b = strings.TrimSpace(b); b != "" {
		if to, err = time.ParseDuration(b); err != nil {
			return 0, 0, fmt.Errorf("--trace-window %q: TO: %w", s, err)
		}
	}
	return from, to, nil
}

// plan scans the trace (every line checked, nothing held) and returns the
// suite a replay draws its cold and warm-up prompts from: the trace's
// first requests. tokens is bench --tokenizer's counter, nil without it.
// Every error is one of use.
func (t *traceFlags) plan(fs *pflag.FlagSet, f *benchFlags, tokens *tokencount.Counter, stderr io.Writer) (*suite.Suite, error) {
	format, err := trace.ParseFormat(t.format)
	if err != nil {
		return nil, fmt.Errorf("--trace-format: %w", err)
	}
	from, to, err := parseWindow(t.window)
	if err != nil {
		return nil, err
	}
	slice := trace.Slice{From: from, To: to, Speed: t.speed}
	if err := slice.Validate(); err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	slice.Speed = 1 // each run sets its own (sweep steps through speeds)

	// The vocabulary: --tokenizer's, else the embedded model's own, else
	// the bundled one.
	vocab := ""
	switch {
	case tokens != nil:
		vocab = tokens.Name + " (--tokenizer)"
	case f.url == "" && f.embedded.model != "":
		if t.own, err = tokencount.Open(f.embedded.model); err != nil {
			return nil, fmt.Errorf("--model: %w", err)
		}
		tokens, vocab = t.own, t.own.Name+" (the embedded model's own)"
	default:
		if t.own, err = tokencount.Bundled(); err != nil {
			return nil, err
		}
		tokens, vocab = t.own, t.own.Name+" (bundled"
		if f.url == "" {
			vocab += ", the embedded model's own)"
		} else {
			vocab += "; not the target's: give --tokenizer MODEL.gguf for exact lengths)"
			fmt.Fprintf(stderr, "tokenpulse: warning: the trace's prompts are written in the bundled vocabulary (%s), not the target's: give --tokenizer MODEL.gguf for prompts of exactly the recorded lengths\n", t.own.Name)
		}
	}
	// The context lengths are checked against: --ctx, else the embedded
	// server's (the bundled model's own, or at most 2048).
	ctx := 0
	switch {
	case fs.Changed("ctx"):
		ctx = f.embedded.ctx
	case f.url == "" && f.embedded.model == "":
		ctx = bundledCtx
	case f.url == "":
		ctx = 2048
	}
	p, err := trace.NewPrompter(tokens, f.seed)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	rp, err := trace.Scan(t.file, format, trace.Options{Ctx: ctx}, slice, p)
	if err != nil {
		return nil, err
	}
	t.replay = rp
	head, err := rp.Head()
	if err != nil {
		return nil, err
	}
	sum, err := fileSHA256(t.file)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	t.config = runfile.TraceConfig{
		File: t.file, Format: string(rp.Format()), Speed: t.speed,
		WindowFromMS: from.Milliseconds(), WindowToMS: to.Milliseconds(),
		Entries: rp.Len(), Vocabulary: vocab, SHA256: sum,
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "tokenpulse: replaying %d requests of %s (%s) at speed ×%g, prompts written in %s\n", rp.Len(), t.file, rp.Format(), t.speed, vocab)
	}
	if len(f.judge.thresholds) == 0 && f.judge.tier == "" {
		// The replay is one category of its own: no suite threshold
		// names it, so "held" would mean only the error budget.
		fmt.Fprintf(stderr, "tokenpulse: warning: a trace replay is judged only on its error budget: the suite's thresholds name its categories, not the trace's; give --threshold (e.g. 'ttft.p95 < 2s') or --tier to judge its latency\n")
	}
	return &suite.Suite{
		Name:       "trace:" + filepath.Base(t.file) + "@" + sum[:12],
		Categories: []suite.Category{{Name: trace.Category, Weight: 1, Prompts: head}},
	}, nil
}

// close releases the vocabulary plan opened.
func (t *traceFlags) close() {
	if t.own != nil {
		t.own.Close()
	}
}

// recorded is the run file's account of the trace at speed.
func (t *traceFlags) recorded(speed float64) *runfile.TraceConfig {
	if !t.on() {
		return nil
	}
	c := t.config
	c.Speed = speed
	return &c
}

// traceOptions returns the request options of a replay: ignore_eos on,
// so that each answer runs to its recorded length, unless --ignore-eos
// was given (=false for a target that refuses the extension).
func traceOptions(fs *pflag.FlagSet, f *benchFlags, o *api.RequestOptions) *api.RequestOptions {
	if !f.trace.on() || fs.Changed("ignore-eos") {
		return o
	}
	if o == nil {
		o = &api.RequestOptions{}
	}
	on := true
	o.IgnoreEOS = &on
	return o
}

// fileSHA256 is the hex SHA-256 of the file at path, read as a stream.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
