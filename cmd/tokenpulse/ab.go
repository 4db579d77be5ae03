package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/internal/abtest"
	"github.com/tokenpulse/tokenpulse/internal/launch"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// abFlags make bench an A/B of two models on the embedded server.
type abFlags struct {
	modelB string
}

func (a *abFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&a.modelB, "model-b", "", "A/B: also serve this GGUF file and measure it against --model (A) on the same prompts, interleaved A B B A ..., greedy unless --temperature is given; writes a/run.json, b/run.json and ab.json (sizes, TTFT, TPOT mean and p95, gap p95, longest stall, output agreement, compare's test of each change)")
}

// runAB measures --model (A) against --model-b (B): both served at once
// by the embedded engine, the same sample of prompts sent to each one
// request at a time, interleaved (see package abtest).
func runAB(cmd *cobra.Command, f *benchFlags) error {
	fs := cmd.Flags()
	f.apiSet = fs.Changed("api")
	if err := f.validate(); err != nil {
		return usageErr(err)
	}
	switch {
	case f.url != "":
		// Refused, not supported: the A/B's fairness is that one process
		// on one machine serves both files, interleaved, so that its noise
		// falls on both alike, and that the files are at hand (their sizes
		// are part of the result). Two servers elsewhere share neither.
		return usageErr(errors.New("--model-b serves both model files from the embedded server, interleaved on one machine: it takes no --url; to compare two servers, bench each (same --seed and -n) and run 'tokenpulse compare A/run.json B/run.json'"))
	case f.concurrency != 1 || f.rate > 0 || f.scenario != "":
		return usageErr(errors.New("--model-b interleaves one request at a time: it takes no -c above 1, --rate or --scenario"))
	case f.browser.on:
		return usageErr(errors.New("--model-b measures the stream, not a page: it takes no --browser"))
	case f.trace.on():
		return usageErr(errors.New("--model-b interleaves one request at a time: it cannot keep a trace's times (--trace)"))
	case fs.Changed("profile"):
		return usageErr(errors.New("--model-b takes no --profile: both servers share one process; profile each with its own bench run"))
	case fs.Changed("scrape") || fs.Changed("scrape-series"):
		return usageErr(errors.New("--model-b takes no --scrape: both models share one server's gauges; scrape each with its own bench run"))
	}
	for _, m := range []struct{ flag, path string }{{"--model", f.embedded.model}, {"--model-b", f.ab.modelB}} {
		if m.path == "" {
			continue
		}
		if _, err := os.Stat(m.path); err != nil {
			return usageErr(fmt.Errorf("%s: %w (give the path of a GGUF file)", m.flag, err))
		}
	}
	reqOpts, err := f.requestOptions(fs)
	if err != nil {
		return usageErr(err)
	}
	if !fs.Changed("temperature") {
		// Greedy, so that the two outputs can be compared token for token.
		f.temperature = 0
		if err := fs.Set("temperature", "0"); err != nil {
			return err
		}
		if reqOpts, err = f.requestOptions(fs); err != nil {
			return usageErr(err)
		}
	}
	s, err := suite.Resolve(f.suite, suite.Validate(validateThreshold))
	if err != nil {
		return usageErr(err)
	}
	cold := runner.ColdByDefault(true, f.coldAsked(fs)) // the A/B starts both servers
	work := f.workload(s, cold, fs)
	if err := work.Validate(); err != nil {
		return usageErr(err)
	}
	header, err := parseHeaders(f.headers)
	if err != nil {
		return usageErr(err)
	}
	if _, err := f.outputs.formats(); err != nil {
		return usageErr(err)
	}
	rules, err := f.judge.policy(s, f.errorBudget).Resolve()
	if err != nil {
		return usageErr(err)
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stderr := cmd.ErrOrStderr()
	started := time.Now().UTC()
	dir, err := runner.MakeDir(f.out, started)
	if err != nil {
		return fmt.Errorf("run directory: %w", err)
	}

	formats, _ := f.outputs.formats() // checked above
	cfg := abtest.Config{
		Spec: runner.Spec{
			Suite: s, Workload: work, Device: f.judge.device(), Tool: toolInfo(),
			CommandLine: append([]string{"tokenpulse"}, os.Args[1:]...),
			MaxTokens:   f.maxTokens, Timeout: f.timeout, Request: reqOpts, Rules: rules,
			Now: func() time.Time { return started },
		},
		Dir: dir, Formats: formats, Fatal: refusedCredentials(f.apiKeyEnv),
	}
	var arms []abtest.Arm
	for _, a := range []struct{ label, path string }{{"A", f.embedded.model}, {"B", f.ab.modelB}} {
		m := f.embedded.engineModel()
		m.Path = a.path
		if !f.quiet {
			fmt.Fprintf(stderr, "tokenpulse: starting the embedded server for %s (%s) ...\n", a.label, orBundled(a.path))
		}
		emb, err := launch.StartTarget(ctx, m)
		if err != nil {
			return fmt.Errorf("%s: %w", a.label, err)
		}
		defer emb.Close()
		c := &stream.Client{BaseURL: emb.Target.URL, API: f.api, Model: emb.Target.Model, APIKey: os.Getenv(f.apiKeyEnv), Header: header}
		if reqOpts != nil {
			c.Options = *reqOpts
		}
		target := emb.Target
		target.API = f.api
		path := a.path
		if path == "" {
			path = emb.Backend.Model().Info().Path
		}
		arms = append(arms, abtest.Arm{Label: a.label, Path: path, Client: c, Target: target, ColdStart: emb.ColdStart})
	}
	prog := newProgressLine(stderr, f.quiet)
	errs := 0
	cfg.Progress = func(st abtest.Step) {
		if st.Last != nil && !st.Last.OK() {
			errs++
		}
		prog.update(bench.Progress{Phase: st.Side + " " + st.Phase, Done: st.Done, Total: st.Total, Errors: errs})
	}
	res, err := abtest.Measure(ctx, cfg, arms[0], arms[1])
	prog.finish()
	if err != nil {
		return err
	}
	if err := res.Summary.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	if err := writeABHTML(filepath.Join(dir, ABHTMLFile), res.Summary); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tokenpulse: A/B written to %s (%s, %s, a/run.json, b/run.json)\n", dir, abtest.FileName, ABHTMLFile)
	runErr := res.Stopped
	if runErr != nil {
		if ctx.Err() != nil {
			return withCode(130, errors.New("interrupted; what was measured is in "+dir))
		}
		return withCode(exitFailure, fmt.Errorf("%w; what was measured is in %s", runErr, dir))
	}
	for i, run := range res.Runs {
		if measure.Count(run).AllFailed() {
			return withCode(exitFailure, fmt.Errorf("every request to %s failed (first error: %s)", arms[i].Label, firstError(run)))
		}
	}
	return nil
}

// orBundled names a model file, "" being the bundled model.
func orBundled(path string) string {
	if path == "" {
		return "the bundled model"
	}
	return path
}
