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
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/runfile"
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

// ABFile and ABTextFile are the A/B summary's files in the run directory.
const (
	ABFile     = "ab.json"
	ABTextFile = "ab.txt"
)

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
	case fs.Changed("profile"):
		return usageErr(errors.New("--model-b takes no --profile: both servers share one process; profile each with its own bench run"))
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
	cold := f.cold || !fs.Changed("cold")
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

	type side struct {
		label, path string
		emb         *launch.Target
		rec         *abtest.Recorder
		run         *runfile.Run
	}
	sides := []*side{{label: "A", path: f.embedded.model}, {label: "B", path: f.ab.modelB}}
	for _, sd := range sides {
		m := f.embedded.engineModel()
		m.Path = sd.path
		if !f.quiet {
			fmt.Fprintf(stderr, "tokenpulse: starting the embedded server for %s (%s) ...\n", sd.label, orBundled(sd.path))
		}
		emb, err := launch.StartTarget(ctx, m)
		if err != nil {
			return fmt.Errorf("%s: %w", sd.label, err)
		}
		defer emb.Close()
		sd.emb = emb
		c := &stream.Client{BaseURL: emb.Target.URL, API: f.api, Model: emb.Target.Model, APIKey: os.Getenv(f.apiKeyEnv), Header: header}
		if reqOpts != nil {
			c.Options = *reqOpts
		}
		sd.rec = &abtest.Recorder{Doer: c}
		target := emb.Target
		target.API = f.api
		sd.run, err = runner.New(&runner.Spec{
			Suite: s, Workload: work, Target: target, ColdStart: emb.ColdStart,
			Device: f.judge.device(), Tool: toolInfo(), CommandLine: append([]string{"tokenpulse"}, os.Args[1:]...),
			MaxTokens: f.maxTokens, Timeout: f.timeout, Request: reqOpts, Rules: rules,
			Now: func() time.Time { return started },
		})
		if err != nil {
			return usageErr(err)
		}
	}
	base := bench.Config{MaxTokens: f.maxTokens, Timeout: f.timeout, Fatal: refusedCredentials(f.apiKeyEnv)}
	ca, cb := base, base
	ca.Client, cb.Client = sides[0].rec, sides[1].rec
	prog := newProgressLine(stderr, f.quiet)
	errs := 0
	progress := func(st abtest.Step) {
		if st.Last != nil && !st.Last.OK() {
			errs++
		}
		prog.update(bench.Progress{Phase: st.Side + " " + st.Phase, Done: st.Done, Total: st.Total, Errors: errs})
	}
	restoreGC := stream.HoldGC()
	ra, rb, runErr := abtest.Run(ctx, ca, cb, work, progress)
	restoreGC()
	prog.finish()
	finished := time.Now().UTC()
	sides[0].run.Requests, sides[1].run.Requests = ra, rb
	var views []abtest.Side
	for _, sd := range sides {
		sd.run.FinishedAt = finished
		sd.run.Interrupted = runErr != nil
		runner.Finish(sd.run, s, rules)
		sub := filepath.Join(dir, map[string]string{"A": "a", "B": "b"}[sd.label])
		path := filepath.Join(sub, runner.FileName)
		if err := runner.Write(sd.run, sub); err != nil {
			return fmt.Errorf("%s: %w", sd.label, err)
		}
		if formats, _ := f.outputs.formats(); len(formats) > 0 {
			if err := report.WriteAll(sub, sd.run, report.Options{Formats: formats}); err != nil {
				return fmt.Errorf("%s's reports: %w", sd.label, err)
			}
		}
		modelPath := sd.path
		if modelPath == "" {
			modelPath = sd.emb.Backend.Model().Info().Path
		}
		views = append(views, abtest.NewSide(sd.label, modelPath, path, sd.run))
	}
	agree := abtest.Agree(sides[0].run, sides[1].run, sides[0].rec.Output, sides[1].rec.Output)
	sum := abtest.Summarize(views[0], views[1], sides[0].run, sides[1].run, agree)
	if err := sum.Write(filepath.Join(dir, ABFile)); err != nil {
		return fmt.Errorf("writing the A/B summary: %w", err)
	}
	txt, err := os.Create(filepath.Join(dir, ABTextFile))
	if err != nil {
		return err
	}
	defer txt.Close()
	if err := sum.WriteText(txt); err != nil {
		return err
	}
	if err := sum.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	if err := writeABHTML(filepath.Join(dir, ABHTMLFile), sum); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tokenpulse: A/B written to %s (%s, %s, a/run.json, b/run.json)\n", dir, ABFile, ABHTMLFile)
	if runErr != nil {
		if ctx.Err() != nil {
			return withCode(130, errors.New("interrupted; what was measured is in "+dir))
		}
		return withCode(exitFailure, fmt.Errorf("%w; what was measured is in %s", runErr, dir))
	}
	for _, sd := range sides {
		if measure.Count(sd.run).AllFailed() {
			return withCode(exitFailure, fmt.Errorf("every request to %s failed (first error: %s)", sd.label, firstError(sd.run)))
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
