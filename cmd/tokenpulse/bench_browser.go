package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/browserbench"
	"github.com/tokenpulse/tokenpulse/internal/chatpage"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// browserFlags are bench's flags for measuring in a real browser.
type browserFlags struct {
	on          bool
	render      []string
	cpuThrottle float64
}

func (b *browserFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&b.on, "browser", false, "measure what the eye sees: ask through tokenpulse's chat page in headless Chromium (apt-get install chromium), clicking send for real, and record each token's arrival, DOM insertion and paint in the page")
	fl.StringSliceVar(&b.render, "render", []string{chatpage.RenderFrame}, "with --browser, the page's render strategies, run one after another: per-token (append each token as it arrives), frame (batch per animation frame), debounce16 (flush 16 ms after the last token)")
	fl.Float64Var(&b.cpuThrottle, "cpu-throttle", 1, "with --browser, Chromium's CPU slowdown factor (4: a device about four times slower), standing in for slower device tiers")
}

// validate checks the browser flags against the rest of bench's.
func (b *browserFlags) validate(fs *pflag.FlagSet, f *benchFlags) error {
	if !b.on {
		for _, name := range []string{"render", "cpu-throttle"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s needs --browser", name)
			}
		}
		return nil
	}
	seen := map[string]bool{}
	for _, r := range b.render {
		if !chatpage.ValidRender(r) {
			return fmt.Errorf("--render must name per-token, frame or debounce16, not %q", r)
		}
		if seen[r] {
			return fmt.Errorf("--render names %s twice", r)
		}
		seen[r] = true
	}
	switch {
	case len(b.render) == 0:
		return errors.New("--render needs at least one strategy")
	case !(b.cpuThrottle >= 1) || b.cpuThrottle > 100:
		return fmt.Errorf("--cpu-throttle must be between 1 and 100, not %v", b.cpuThrottle)
	case f.concurrency != 1 || f.rate > 0:
		return errors.New("--browser asks one request at a time in one page: it takes no -c or --rate")
	case f.api != "chat":
		return errors.New("--browser speaks the chat API only (the page asks /v1/chat/completions)")
	case f.tokenizer != "":
		return errors.New("--browser counts tokens from the server's counts or usage: it takes no --tokenizer")
	}
	return nil
}

// workload returns the function that carries out a bench workload: run
// itself, or with --browser one that asks every prompt through the chat
// page in Chromium and records the session in run's config.
func (b *browserFlags) workload(run *runfile.Run, stderr interface{ Write([]byte) (int, error) }, run0 func(context.Context, bench.Config, bench.Workload) (bench.Result, error)) func(context.Context, bench.Config, bench.Workload) (bench.Result, error) {
	if !b.on {
		return run0
	}
	return func(ctx context.Context, cfg bench.Config, w bench.Workload) (bench.Result, error) {
		if err := w.Validate(); err != nil {
			return bench.Result{}, err
		}
		client, ok := cfg.Client.(*stream.Client)
		if !ok {
			return bench.Result{}, errors.New("--browser needs an HTTP target")
		}
		header := http.Header{}
		for k, vs := range client.Header {
			header[k] = vs
		}
		if client.APIKey != "" {
			header.Set("Authorization", "Bearer "+client.APIKey)
		}
		fmt.Fprintf(stderr, "tokenpulse: starting Chromium (render %s, CPU throttle %g×) ...\n", strings.Join(b.render, ", "), b.cpuThrottle)
		s, err := browserbench.Start(ctx, browserbench.Config{
			Target: client.BaseURL, Header: header, Model: client.Model,
			MaxTokens: cfg.MaxTokens, CPUThrottle: b.cpuThrottle, Timeout: cfg.Timeout,
		})
		if err != nil {
			return bench.Result{}, fmt.Errorf("--browser: %w", err)
		}
		defer s.Close()
		wc := w.Config(cfg)
		plan := browserbench.Plan{
			Cold: wc.ColdPrompt, Warmup: wc.WarmupPrompts, Prompts: wc.Prompts,
			Renders: b.render, Scenario: w.Scenario, Progress: cfg.Progress, Journal: cfg.Journal,
		}
		if w.Scenario == bench.ScenarioRapidFire {
			pairs := max(w.Requests/3, 1)
			plan.Prompts = w.Suite.Sample(pairs*2, w.Seed)
		}
		reqs, scen, err := s.Run(ctx, plan)
		info := s.Info()
		info.Renders = b.render
		run.Config.Browser = &info
		return bench.Result{Requests: reqs, Scenario: scen}, err
	}
}
