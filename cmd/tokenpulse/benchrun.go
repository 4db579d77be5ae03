package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/internal/launch"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
	"github.com/tokenpulse/tokenpulse/tokencount"
)

// benchPlan is what bench's flags resolve to before anything is
// measured: the suite, the rules, the request's shape. One plan measures
// one run (bench) or many (sweep, --repeat), each with its own load.
type benchPlan struct {
	f       *benchFlags
	fs      *pflag.FlagSet
	suite   *suite.Suite
	rules   *gate.RuleSet
	reqOpts *api.RequestOptions
	header  http.Header
	tokens  *tokencount.Counter
}

// planBench checks every flag of f and resolves them, saying on stderr
// what a person should know before the run; every error is one of use
// (exit 2). Close the plan when done.
func planBench(fs *pflag.FlagSet, f *benchFlags, stderr io.Writer) (*benchPlan, error) {
	if err := f.validate(); err != nil {
		return nil, usageErr(err)
	}
	if err := f.validateArrival(fs); err != nil {
		return nil, usageErr(err)
	}
	if err := f.browser.validate(fs, f); err != nil {
		return nil, usageErr(err)
	}
	if err := f.scrape.validate(fs); err != nil {
		return nil, usageErr(err)
	}
	if err := f.shard.resolve(os.Getenv); err != nil {
		return nil, usageErr(err)
	}
	if err := f.shard.checkWith(f); err != nil {
		return nil, usageErr(err)
	}
	if err := f.trace.check(fs, f); err != nil {
		return nil, usageErr(err)
	}
	reqOpts, err := f.requestOptions(fs)
	if err != nil {
		return nil, usageErr(err)
	}
	reqOpts = traceOptions(fs, f, reqOpts)
	var tokens *tokencount.Counter
	if f.tokenizer != "" {
		if tokens, err = tokencount.Open(f.tokenizer); err != nil {
			return nil, usageErr(fmt.Errorf("--tokenizer: %w", err))
		}
	}
	p := &benchPlan{f: f, fs: fs, reqOpts: reqOpts, tokens: tokens}
	ok := false
	defer func() {
		if !ok {
			p.close()
		}
	}()
	var s *suite.Suite
	if f.trace.on() {
		s, err = f.trace.plan(fs, f, tokens, stderr)
	} else {
		s, err = suite.Resolve(f.suite, suite.Validate(validateThreshold))
	}
	if err != nil {
		return nil, usageErr(err)
	}
	work := f.workload(s, false, fs)
	if err := work.Validate(); err != nil {
		return nil, usageErr(err)
	}
	if _, err := work.Schedule(); err != nil {
		return nil, usageErr(err)
	}
	rules, err := f.judge.policy(s, f.errorBudget).Resolve()
	if err != nil {
		return nil, usageErr(err)
	}
	if err := f.outputs.check(); err != nil {
		return nil, usageErr(err)
	}
	header, err := parseHeaders(f.headers)
	if err != nil {
		return nil, usageErr(err)
	}
	p.suite, p.rules, p.header = s, rules, header
	ok = true
	return p, nil
}

// beginBench resolves f's plan (planBench) and the context its runs
// stop on: the first Ctrl-C or SIGTERM. Close the plan and stop the
// signals when done.
func beginBench(cmd *cobra.Command, f *benchFlags) (*benchPlan, context.Context, context.CancelFunc, error) {
	plan, err := planBench(cmd.Flags(), f, cmd.ErrOrStderr())
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	return plan, ctx, stop, nil
}

// close releases what the plan opened (the tokenizers).
func (p *benchPlan) close() {
	if p.tokens != nil {
		p.tokens.Close()
	}
	p.f.trace.close()
}

// benchTarget is the endpoint a plan measures: a remote one, or the
// embedded server started once for every run of the plan.
type benchTarget struct {
	target    runfile.Target
	coldStart *runfile.ColdStart
	client    *stream.Client
	emb       *launch.Target
}

// embedded reports whether the target is the embedded server.
func (t *benchTarget) embedded() bool { return t.emb != nil }

// close stops the embedded server, if one was started.
func (t *benchTarget) close() {
	if t.emb != nil {
		t.emb.Close()
	}
}

// openTarget starts the embedded server when no --url was given, and
// makes the client every run of the plan uses.
func (p *benchPlan) openTarget(ctx context.Context, stderr io.Writer) (*benchTarget, error) {
	f := p.f
	t := &benchTarget{target: runfile.Target{URL: f.url, API: f.api, Model: f.model}}
	if f.url == "" {
		if !f.quiet {
			fmt.Fprintln(stderr, "tokenpulse: starting the embedded server ...")
		}
		emb, err := launch.StartTarget(ctx, f.embedded.engineModel())
		if err != nil {
			return nil, err
		}
		t.emb = emb
		t.target = emb.Target
		t.target.API = f.api
		t.coldStart = emb.ColdStart
		if !f.quiet {
			fmt.Fprintf(stderr, "tokenpulse: %s ready at %s in %.0f ms\n", emb.Target.Model, emb.Target.URL, emb.ColdStart.ProcessStartMS)
		}
	}
	t.client = &stream.Client{
		BaseURL: t.target.URL,
		API:     f.api,
		Model:   t.target.Model,
		APIKey:  os.Getenv(f.apiKeyEnv),
		Header:  p.header,
	}
	if p.reqOpts != nil {
		t.client.Options = *p.reqOpts
	}
	if t.client.Model == "" {
		t.target.Model = bench.DiscoverModel(ctx, t.client)
		t.client.Model = t.target.Model
	}
	if f.url != "" {
		t.target.Backend, t.coldStart = bench.Probe(ctx, t.client)
	}
	return t, nil
}

// defaultCold says whether the plan's first run measures a cold request:
// --cold when given, else true for the embedded server.
func (p *benchPlan) defaultCold(t *benchTarget) bool {
	return runner.ColdByDefault(t.embedded(), p.f.coldAsked(p.fs))
}

// runSpec is what may differ between the runs of one plan: the load and
// where the run goes.
type runSpec struct {
	// rate > 0 runs an open loop at that many requests/s (the flags'
	// arrival, duration and ramp); 0 a closed loop.
	rate float64
	// concurrency is the closed loop's requests in flight, or the open
	// loop's ceiling.
	concurrency int
	// out is the run directory ("" = tokenpulse-runs/TIMESTAMP).
	out string
	// cold measures the first request as the target's cold one.
	cold bool
	// coldStart records the target's cold-start breakdown (its warm-up
	// as /health reports it) in the run: every run of bench, the first
	// of a sweep or of repeats (the target started once for all).
	coldStart bool
	// quiet shows no progress line.
	quiet bool
}

// specFromFlags is the one run that bench's flags describe.
func (p *benchPlan) specFromFlags(t *benchTarget) runSpec {
	return runSpec{rate: p.f.rate, concurrency: p.f.concurrency, out: p.f.out, cold: p.defaultCold(t), coldStart: true, quiet: p.f.quiet}
}

// flagsFor returns the plan's flags with spec's load.
func (p *benchPlan) flagsFor(spec runSpec) *benchFlags {
	g := *p.f
	g.rate, g.concurrency = spec.rate, spec.concurrency
	return &g
}

// measureRun carries out one run of the plan against t (runner.Measure):
// it returns the run, its directory and, apart, the error that stopped
// the workload early (the run is then marked interrupted and still
// written). The error is one of use or of writing.
func (p *benchPlan) measureRun(ctx context.Context, stderr io.Writer, t *benchTarget, spec runSpec) (*runfile.Run, string, error, error) {
	rs, err := p.runnerSpec(t, spec)
	if err != nil {
		return nil, "", nil, err
	}
	p.perRun(ctx, stderr, t, spec.quiet, &rs)
	res, err := runner.Measure(ctx, rs)
	if err != nil {
		return nil, "", nil, err
	}
	return res.Run, res.Dir, res.Stopped, nil
}

// runnerSpec maps the plan's flags, with spec's load, onto the run
// runner.Measure carries out against t (but for what perRun adds).
func (p *benchPlan) runnerSpec(t *benchTarget, spec runSpec) (runner.Spec, error) {
	f := p.flagsFor(spec)
	work := f.workload(p.suite, spec.cold, p.fs)
	if _, err := work.Schedule(); err != nil {
		return runner.Spec{}, usageErr(err)
	}
	rs := runner.Spec{
		Suite: p.suite, Workload: work, Client: t.client,
		Target: t.target, Device: f.judge.deviceWith(f.adb.facts), Tool: toolInfo(),
		CommandLine: append([]string{"tokenpulse"}, os.Args[1:]...),
		MaxTokens:   f.maxTokens, Timeout: f.timeout, Request: p.reqOpts, Tokens: p.tokens,
		Rules: p.rules, Dir: spec.out, StartAt: f.shard.at,
		Trace: f.trace.recorded(f.trace.speed),
	}
	if spec.coldStart {
		rs.ColdStart = t.coldStart
	}
	return rs, nil
}

// perRun gives rs what must be new for each run, and what writes to
// stderr: its progress line, the profile around it, the stop rules (which
// count the run's failures), the scrape of the target's metrics and a
// page measurement's session.
func (p *benchPlan) perRun(ctx context.Context, stderr io.Writer, t *benchTarget, quiet bool, rs *runner.Spec) {
	f := p.f
	prog := newProgressLine(stderr, quiet)
	prog.lines = f.adb.progressLines
	rs.Progress, rs.Fatal, rs.Log = prog.update, stopRules(f.apiKeyEnv, t.target.URL), stderr
	rs.Around = func(dir string) func() *runfile.Profile {
		prof := f.profile.start(ctx, stderr, p.fs, dir, f.url, t.client)
		return func() *runfile.Profile {
			pr := stopProfile(prof, stderr, dir)
			prog.finish()
			return pr
		}
	}
	rs.Sample = f.scrape.sampler(ctx, stderr, t.client, quiet)
	if f.browser.on {
		rs.Execute = func(ctx context.Context, run *runfile.Run, cfg bench.Config, w bench.Workload) (bench.Result, error) {
			return f.browser.workload(run, stderr, bench.RunWorkload)(ctx, cfg, w)
		}
	}
}
