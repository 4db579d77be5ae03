package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/internal/scrape"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// scrapeTarget is --scrape's value when given alone: the target's own
// /metrics.
const scrapeTarget = "target"

// scrapeFlags decide whether bench samples a server's Prometheus metrics
// while the run lasts (bench --scrape).
type scrapeFlags struct {
	url    string
	series []string
}

func (s *scrapeFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&s.url, "scrape", "", "sample a server's Prometheus metrics every second while the run lasts and draw them beside TTFT in the report: --scrape alone takes the target's /metrics, --scrape=URL another endpoint (sent without the API key and headers unless it is the target's origin); a failed scrape is a warning, never a failed run")
	fl.Lookup("scrape").NoOptDefVal = scrapeTarget
	fl.StringSliceVar(&s.series, "scrape-series", nil, "with --scrape, more metrics to keep by name (NAME[,NAME]) besides the known gauges of llama-server --metrics, vLLM and tokenpulse serve; a counter is kept as its rate, a histogram as its mean per interval")
}

// validate checks the flags before anything is measured.
func (s *scrapeFlags) validate(fs *pflag.FlagSet) error {
	if s.url == "" {
		if fs.Changed("scrape-series") {
			return errors.New("--scrape-series needs --scrape")
		}
		return nil
	}
	if s.url == scrapeTarget {
		return nil
	}
	u, err := url.Parse(s.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--scrape=%s: want an http:// or https:// URL of a metrics endpoint, or --scrape alone for the target's /metrics", s.url)
	}
	return nil
}

// sampler returns the runner's Sample hook for a run against the target
// c speaks to, or nil without --scrape. It says on w where it samples.
func (s *scrapeFlags) sampler(ctx context.Context, w io.Writer, c *stream.Client, quiet bool) func() func() (*runfile.Scrape, []string) {
	if s.url == "" {
		return nil
	}
	cfg := scrape.Config{Target: c.BaseURL, APIKey: c.APIKey, Header: c.Header, Series: s.series, URL: s.url}
	if s.url == scrapeTarget {
		cfg.URL, _ = scrape.DefaultURL(c.Root())
	}
	return func() func() (*runfile.Scrape, []string) {
		if !quiet {
			how := ""
			if !cfg.SameOrigin() && (cfg.APIKey != "" || len(cfg.Header) > 0) {
				how = " (another origin than the target's: without the API key and headers)"
			}
			fmt.Fprintf(w, "tokenpulse: sampling %s every %s%s\n", cfg.URL, scrape.DefaultInterval, how)
		}
		sm := scrape.Start(ctx, cfg)
		return sm.Stop
	}
}

// benchPositional are bench's positional arguments: none. A URL after a bare
// --scrape is the usual slip (pflag takes a value of a flag with a
// default only after "="): say so.
func benchPositional(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && cmd.Flags().Changed("scrape") && (strings.HasPrefix(args[0], "http://") || strings.HasPrefix(args[0], "https://")) {
		return usageErr(fmt.Errorf("unexpected argument %q: write --scrape=%s (--scrape alone samples the target's /metrics)", args[0], args[0]))
	}
	return cobra.NoArgs(cmd, args)
}
