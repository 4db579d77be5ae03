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
	// A team's own page (--page): its URL and the selectors of its
	// prompt input, send button and output element.
	page, input, send, output string
}

func (b *browserFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&b.on, "browser", false, "measure what the eye sees: ask through tokenpulse's chat page in headless Chromium (apt-get install chromium), clicking send for real, and record each token's arrival, DOM insertion and paint in the page")
	fl.StringSliceVar(&b.render, "render", []string{chatpage.RenderFrame}, "with --browser, the page's render strategies, run one after another: per-token (append each token as it arrives), frame (batch per animation frame), debounce16 (flush 16 ms after the last token)")
	fl.StringVar(&b.page, "page", "", "with --browser, measure your own web app at this URL instead of tokenpulse's chat page: type each prompt into --input, click --send, watch --output (--url names the endpoint the app talks to, for the record)")
	fl.StringVar(&b.input, "input", "", "with --page, the CSS selector of the prompt input")
	fl.StringVar(&b.send, "send", "", "with --page, the CSS selector of the send button")
	fl.StringVar(&b.output, "output", "", "with --page, the CSS selector of the element the answer streams into")
	fl.Float64Var(&b.cpuThrottle, "cpu-throttle", 1, "with --browser, Chromium's CPU slowdown factor (4: a device about four times slower), standing in for slower device tiers")
}

// validate checks the browser flags against the rest of bench's.
func (b *browserFlags) validate(fs *pflag.FlagSet, f *benchFlags) error {
	if !b.on {
		for _, name := range []string{"render", "cpu-throttle", "page", "input", "send", "output"} {
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
	if b.page == "" {
		for _, name := range []string{"input", "send", "output"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s needs --page", name)
			}
		}
		return nil
	}
	switch {
	case !strings.HasPrefix(b.page, "http://") && !strings.HasPrefix(b.page, "https://"):
		return fmt.Errorf("--page must be an http(s) URL, not %q", b.page)
	case b.input == "" || b.send == "" || b.output == "":
		return errors.New("--page needs --input, --send and --output (CSS selectors)")
	case fs.Changed("render"):
		return errors.New("--page renders as the page does: it takes no --render")
	case f.scenario != "":
		return errors.New("--page runs the suite sample: rapid-fire needs tokenpulse's chat page")
	case f.url == "":
		return errors.New("--page needs --url, the endpoint the page talks to (recorded as the target)")
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
		bc := browserbench.Config{
			Target: client.BaseURL, Header: header, Model: client.Model,
			MaxTokens: cfg.MaxTokens, CPUThrottle: b.cpuThrottle, Timeout: cfg.Timeout,
		}
		renders := b.render
		var s *browserbench.Session
		var err error
		if b.page != "" {
			renders = []string{browserbench.RenderPage}
			fmt.Fprintf(stderr, "tokenpulse: starting Chromium on %s (CPU throttle %g×) ...\n", b.page, b.cpuThrottle)
			s, err = browserbench.StartPage(ctx, bc, browserbench.Page{URL: b.page, Input: b.input, Send: b.send, Output: b.output})
		} else {
			fmt.Fprintf(stderr, "tokenpulse: starting Chromium (render %s, CPU throttle %g×) ...\n", strings.Join(renders, ", "), b.cpuThrottle)
			s, err = browserbench.Start(ctx, bc)
		}
		if err != nil {
			return bench.Result{}, fmt.Errorf("--browser: %w", err)
		}
		defer s.Close()
		// The page and renders, for a rebuild of a run killed in the browser.
		if j, ok := cfg.Journal.(interface {
			Update(runfile.JournalUpdate) error
		}); ok {
			info := s.Info()
			info.Renders = renders
			j.Update(runfile.JournalUpdate{Browser: &info})
		}
		wc := w.Config(cfg)
		plan := browserbench.Plan{
			Cold: wc.ColdPrompt, Warmup: wc.WarmupPrompts, Prompts: wc.Prompts,
			Renders: renders, Scenario: w.Scenario, Progress: cfg.Progress, Journal: cfg.Journal,
		}
		if w.Scenario == bench.ScenarioRapidFire {
			pairs := max(w.Requests/3, 1)
			plan.Prompts = w.Suite.Sample(pairs*2, w.Seed)
		}
		convs := 0
		for _, p := range plan.Prompts {
			if p.Conversation() {
				convs++
			}
		}
		if convs > 0 {
			run.Warnings = append(run.Warnings, fmt.Sprintf("%d conversation prompts were asked in the browser as their first turn only (the chat page keeps no history)", convs))
		}
		reqs, scen, err := s.Run(ctx, plan)
		info := s.Info()
		info.Renders = renders
		run.Config.Browser = &info
		return bench.Result{Requests: reqs, Scenario: scen}, err
	}
}
