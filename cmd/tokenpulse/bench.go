package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

func init() { commands = append(commands, newBenchCmd) }

// benchFlags are the flags of `tokenpulse bench`.
type benchFlags struct {
	url         string
	api         string
	apiSet      bool // --api was given
	model       string
	suite       string
	requests    int
	concurrency int
	warmup      int
	cold        bool
	maxTokens   int
	timeout     time.Duration
	headers     []string
	apiKeyEnv   string
	seed        uint64
	out         string
	scenario    string
	quiet       bool
	errorBudget string
	tokenizer   string

	// The open loop (rate > 0): see arrival.
	rate       float64
	arrival    string
	burstiness float64
	duration   time.Duration
	ramp       time.Duration

	// The request's shape: sent only when given (see requestOptions).
	temperature  float64
	topP         float64
	topK         int
	samplingSeed int64
	stop         []string
	ignoreEOS    bool
	extraBody    string

	// repeat > 1 runs the configuration that many times (repeat.go).
	repeat int

	judge    judgeFlags
	embedded embeddedFlags
	outputs  outputFlags
	profile  profileFlags
	ab       abFlags
	browser  browserFlags
	shard    shardFlags
	scrape   scrapeFlags
	trace    traceFlags
	adb      adbFlags
}

func newBenchCmd() *cobra.Command { return newBenchCmdWith(&benchFlags{}) }

// newBenchCmdWith is bench's command with its flags bound to f.
func newBenchCmdWith(f *benchFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run a golden prompt suite against a streaming endpoint and measure every token",
		Long: `Run a golden prompt suite against an OpenAI-compatible streaming endpoint,
timestamp every token, and report TTFT and the token-gap distribution per
category, with the cold request apart.

Without --url, tokenpulse starts its own server on the bundled model (or
--model FILE) on a free loopback port and measures it, cold start first.

TPOT is per output token and gaps are per event; token counts come from
the server (its per-event counts or its usage) or from --tokenizer. A
threshold over a scope with no successful request is not judged. The run
directory holds a journal of finished requests until run.json is written:
"tokenpulse report DIR" rebuilds a run that was killed.

Exit status: 0 when every threshold holds, 99 when a threshold is crossed,
98 when --against finds a significant regression, 2 for errors of use, 1
when the run could not be carried out, 130 when interrupted (what was
measured is still written).`,
		Args: benchPositional,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.apiSet = cmd.Flags().Changed("api")
			return runBench(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "", "base URL of an OpenAI-compatible endpoint (e.g. http://127.0.0.1:8080), or its full chat or completions URL (which also sets --api); empty starts the embedded server")
	fl.StringVar(&f.api, "api", "chat", "API to call: chat (/v1/chat/completions) or completions (/v1/completions)")
	fl.StringVar(&f.model, "model-name", "", "model name to send in requests (default: the target's first model, or \"default\")")
	fl.StringVar(&f.suite, "suite", "en-assistant", "golden suite: a builtin name (listed by: tokenpulse suites) or a YAML file")
	fl.IntVarP(&f.requests, "requests", "n", 30, "measured requests, drawn from the suite by weight")
	fl.IntVarP(&f.concurrency, "concurrency", "c", 1, "requests in flight (closed loop); with --rate, the ceiling on requests in flight (default then 256): a request due at the ceiling waits for a slot and its lag is recorded")
	fl.Float64Var(&f.rate, "rate", 0, "open loop: send requests at this rate (per second) on a schedule drawn with --seed, whatever the target's speed; each is timed from t_start and records its scheduled time and lag")
	fl.StringVar(&f.arrival, "arrival", "poisson", "with --rate, the inter-arrivals: poisson (exponential), gamma (shape --burstiness) or constant (exactly 1/rate)")
	fl.Float64Var(&f.burstiness, "burstiness", 1, "with --arrival gamma, its shape B: coefficient of variation 1/sqrt(B); below 1 burstier than Poisson, 1 is Poisson, above 1 steadier")
	fl.DurationVar(&f.duration, "duration", 0, "with --rate, schedule every arrival within this time (capped by -n when given) instead of -n requests")
	fl.DurationVar(&f.ramp, "ramp", 0, "with --rate, raise the rate linearly from 0 to --rate over this time")
	fl.IntVar(&f.warmup, "warmup", 2, "warm-up requests sent first, recorded but never counted")
	fl.BoolVar(&f.cold, "cold", false, "treat the first request as the target's cold start and report it apart (default true for the embedded server)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "override every prompt's output limit")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "limit for each request")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "extra request header K:V (repeatable)")
	fl.StringVar(&f.apiKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the API key sent as a bearer token")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the suite sample, so a run is reproducible")
	fl.StringVarP(&f.out, "out", "o", "", "directory for run.json and reports (default tokenpulse-runs/TIMESTAMP)")
	fl.StringVar(&f.scenario, "scenario", "", "workload scenario: \"\" (suite sample) or rapid-fire (ask, interrupt, ask again)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress line")
	fl.StringVar(&f.tokenizer, "tokenizer", "", "GGUF file (a model, or a vocabulary-only file) whose vocabulary counts each event's tokens, for a target that sends no per-event counts; TPOT is then exactly per token")
	fl.StringVar(&f.errorBudget, "error-budget", gate.DefaultErrorBudget, "largest share of failed requests that still passes (adds 'errors.rate <= BUDGET'); \"none\" judges errors only by --threshold")
	fl.Float64Var(&f.temperature, "temperature", 0, "sampling temperature (≥ 0) sent with every request; unset sends none, and the server samples with its own default")
	fl.Float64Var(&f.topP, "top-p", 0, "nucleus sampling top_p (0 < P ≤ 1) sent with every request; unset sends none")
	fl.IntVar(&f.topK, "top-k", 0, "top_k (≥ 0) sent with every request, an extension llama.cpp and vLLM accept; unset sends none")
	fl.Int64Var(&f.samplingSeed, "sampling-seed", 0, "the server's sampling seed sent with every request (--seed is the suite sample's); unset sends none")
	fl.StringArrayVar(&f.stop, "stop", nil, "a stop sequence sent with every request (repeatable)")
	fl.BoolVar(&f.ignoreEOS, "ignore-eos", false, "send ignore_eos, an extension llama.cpp and vLLM accept: generate past the end of sequence up to max_tokens")
	fl.StringVar(&f.extraBody, "extra-body", "", "a JSON object merged into every request body, its keys replacing tokenpulse's own; not stream or stream_options, nor model, max_tokens or a key its own flag gives")
	fl.IntVar(&f.repeat, "repeat", 1, "run the configuration K times, one run directory each, and write repeats.json: per figure the mean, sd, CV and 95% confidence interval (compare uses them)")
	f.judge.register(fl)
	f.embedded.register(fl)
	f.outputs.register(fl)
	f.profile.register(fl)
	f.ab.register(fl)
	f.browser.register(fl)
	f.shard.register(fl)
	f.scrape.register(fl)
	f.trace.register(fl)
	f.adb.register(fl)
	return cmd
}

func runBench(cmd *cobra.Command, f *benchFlags) error {
	if f.adb.serial != "" {
		return runOnDevice(cmd, f)
	}
	if err := f.adb.onDevice(); err != nil {
		return usageErr(err)
	}
	if f.ab.modelB != "" {
		if f.shard.shard != "" || f.shard.shards != 0 {
			return usageErr(errors.New("the A/B (--model-b) cannot be sharded"))
		}
		return runAB(cmd, f)
	}
	plan, ctx, stop, err := beginBench(cmd, f)
	if err != nil {
		return err
	}
	defer plan.close()
	defer stop()
	stderr := cmd.ErrOrStderr()
	t, err := plan.openTarget(ctx, stderr)
	if err != nil {
		return err
	}
	defer t.close()
	if f.repeat > 1 {
		return runRepeats(ctx, stop, cmd, plan, t)
	}
	run, dir, runErr, err := plan.measureRun(ctx, stderr, t, plan.specFromFlags(t))
	// From here on a first Ctrl-C has done its job (the run stopped); give
	// the signals back so that a second one ends a slow upload or alert.
	signalled := ctx.Err() != nil
	stop()
	ctx = context.WithoutCancel(ctx)
	if err != nil {
		return err
	}
	return deliverRun(ctx, cmd, f, run, dir, runErr, signalled)
}

// deliverRun hands a measured run on (history, reports, comparison,
// alerts: outputFlags.emit), prints the guide, and returns the exit
// status: 130 when a signal interrupted it, 1 with runErr when that
// stopped it early, else its findings'. bench ends with it, and so does
// a run made on a device (bench --adb).
func deliverRun(ctx context.Context, cmd *cobra.Command, f *benchFlags, run *runfile.Run, dir string, runErr error, signalled bool) error {
	stderr := cmd.ErrOrStderr()
	runPath := filepath.Join(dir, runFileName)
	outcome, err := f.outputs.emit(ctx, cmd.OutOrStdout(), stderr, run, dir)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return withCode(exitFailure, fmt.Errorf("the run is safe in its run file %s, but: %w", runPath, err))
	}
	if guideWanted(cmd.OutOrStdout(), f.quiet) {
		formats, _ := f.outputs.formats() // emit checked them
		if err := writeGuide(cmd.OutOrStdout(), run, dir, formats); err != nil {
			return err
		}
	}

	if run.Interrupted {
		if !signalled {
			return withCode(exitFailure, fmt.Errorf("%w (what was measured is in %s)", runErr, runPath))
		}
		return withCode(130, errors.New("interrupted; what was measured is in "+runPath))
	}
	return findingsExit(run, outcome)
}

// findingsExit is the exit status a finished run's findings give, in
// their order: every request failed (1), a threshold crossed (99), a
// regression (98), else 0. bench and merge both end with it.
func findingsExit(run *runfile.Run, outcome deliveryOutcome) error {
	if measure.Count(run).AllFailed() {
		return withCode(exitFailure, fmt.Errorf("every request failed (first error: %s)", firstError(run)))
	}
	if !gate.Passed(run.Verdicts) {
		return withCode(exitThreshold, nil)
	}
	if len(outcome.regressions) > 0 {
		return withCode(exitRegression, nil)
	}
	return nil
}

func (f *benchFlags) validate() error {
	switch {
	case f.api != "chat" && f.api != "completions":
		return fmt.Errorf("--api must be chat or completions, not %q", f.api)
	case f.requests < 1:
		return fmt.Errorf("--requests must be ≥ 1, not %d: a run without a measured request measures nothing", f.requests)
	case f.concurrency < 1:
		return errors.New("--concurrency must be ≥ 1")
	case f.warmup < 0:
		return errors.New("--warmup must be ≥ 0")
	case f.maxTokens < 0:
		return errors.New("--max-tokens must be ≥ 0")
	case f.timeout < 0:
		return errors.New("--timeout must be ≥ 0")
	case f.repeat < 1:
		return fmt.Errorf("--repeat must be ≥ 1, not %d", f.repeat)
	case f.scenario != "" && f.scenario != bench.ScenarioRapidFire:
		return fmt.Errorf("--scenario must be rapid-fire or empty, not %q", f.scenario)
	}
	if f.url != "" {
		// A full endpoint URL is taken as its base and its API.
		base, api, err := stream.SplitEndpoint(f.url)
		if err != nil {
			return fmt.Errorf("--url: %w", err)
		}
		if api != "" && f.apiSet && f.api != api {
			return fmt.Errorf("--url names the %s API (%s) but --api says %s", api, f.url, f.api)
		}
		if api != "" {
			f.api = api
		}
		f.url = base
	}
	return nil
}

// requestOptions returns what the request-shape flags ask every request
// to send, nil when none was given: a flag not given sends nothing, so
// that the server samples with its own default.
func (f *benchFlags) requestOptions(fs *pflag.FlagSet) (*api.RequestOptions, error) {
	var o api.RequestOptions
	if fs.Changed("temperature") {
		if !(f.temperature >= 0) || math.IsInf(f.temperature, 0) {
			return nil, fmt.Errorf("--temperature must be a finite number ≥ 0, not %v", f.temperature)
		}
		o.Temperature = &f.temperature
	}
	if fs.Changed("top-p") {
		if !(f.topP > 0 && f.topP <= 1) {
			return nil, fmt.Errorf("--top-p must be in (0, 1], not %v", f.topP)
		}
		o.TopP = &f.topP
	}
	if fs.Changed("top-k") {
		if f.topK < 0 {
			return nil, fmt.Errorf("--top-k must be ≥ 0, not %d", f.topK)
		}
		o.TopK = &f.topK
	}
	if fs.Changed("sampling-seed") {
		o.Seed = &f.samplingSeed
	}
	for _, s := range f.stop {
		if s == "" {
			return nil, errors.New("--stop must not be empty")
		}
	}
	o.Stop = f.stop
	if fs.Changed("ignore-eos") {
		o.IgnoreEOS = &f.ignoreEOS
	}
	if fs.Changed("extra-body") {
		extra, err := api.ExtraObject([]byte(f.extraBody))
		if err != nil {
			return nil, fmt.Errorf("--extra-body: %w", err)
		}
		// A key said twice, or one of those recorded elsewhere in the run
		// file (max_tokens, which also sizes the client's limits on a
		// response, and the model), would leave the run file wrong.
		for _, kf := range [][2]string{
			{"model", "model-name"}, {"max_tokens", "max-tokens"},
			{"temperature", "temperature"}, {"top_p", "top-p"}, {"top_k", "top-k"},
			{"seed", "sampling-seed"}, {"stop", "stop"}, {"ignore_eos", "ignore-eos"},
		} {
			key, flag := kf[0], kf[1]
			if _, ok := extra[key]; ok && (fs.Changed(flag) || key == "model" || key == "max_tokens") {
				return nil, fmt.Errorf("--extra-body sets %q: give it with --%s instead", key, flag)
			}
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(f.extraBody)); err != nil {
			return nil, fmt.Errorf("--extra-body: %w", err)
		}
		o.ExtraBody = buf.Bytes()
	}
	if o.IsZero() {
		return nil, nil
	}
	return &o, nil
}

// defaultCeiling is the open loop's ceiling on requests in flight when
// -c is not given.
const defaultCeiling = 256

// workload is the run the flags describe, drawn from suite s.
func (f *benchFlags) workload(s *suite.Suite, cold bool, fs *pflag.FlagSet) bench.Workload {
	w := bench.Workload{
		Suite: s, Requests: f.requests, Warmup: f.warmup, Cold: cold, Seed: f.seed,
		Concurrency: f.concurrency, Scenario: f.scenario, Shard: f.shard.part,
	}
	if f.rate != 0 || fs.Changed("rate") {
		w.Arrival = bench.Arrival{Process: runfile.Arrival(f.arrival), Rate: f.rate, Duration: f.duration, Ramp: f.ramp}
		// --burstiness defaults to 1, the gamma's; the other processes
		// get it only when given, for Arrival.Validate to refuse.
		if w.Arrival.Process == bench.ArrivalGamma || fs.Changed("burstiness") {
			w.Arrival.Burstiness = f.burstiness
		}
		// With a duration, -n caps the schedule only when given.
		if f.duration == 0 || fs.Changed("requests") {
			w.Arrival.Max = f.requests
		}
		if !fs.Changed("concurrency") {
			w.Concurrency = defaultCeiling
		}
	}
	if f.trace.replay != nil {
		w.Replay = f.trace.replay.WithSpeed(f.trace.speed)
		if !fs.Changed("concurrency") {
			w.Concurrency = defaultCeiling
		}
	}
	return w
}

// validateArrival checks that the open loop's flags come with --rate.
// The values themselves are bench.Arrival.Validate's to check (through
// Workload.Validate), on the arrival workload maps them onto.
func (f *benchFlags) validateArrival(fs *pflag.FlagSet) error {
	if f.rate != 0 || fs.Changed("rate") {
		return nil
	}
	for _, name := range []string{"arrival", "burstiness", "duration", "ramp"} {
		if fs.Changed(name) {
			return fmt.Errorf("--%s needs --rate (without it the run is a closed loop of -c requests in flight)", name)
		}
	}
	return nil
}

// parseHeaders turns K:V flags (-H, of bench, sweep and ab) into a
// header, each checked by the client's rule (stream.CheckHeader) before
// anything is measured.
func parseHeaders(hs []string) (http.Header, error) {
	h := http.Header{}
	for _, kv := range hs {
		k, v, ok := strings.Cut(kv, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("--header %q: want K:V", kv)
		}
		v = strings.Trim(v, " \t")
		if err := stream.CheckHeader(k, v); err != nil {
			return nil, fmt.Errorf("--header %q: %w", kv, err)
		}
		h.Add(k, v)
	}
	return h, nil
}

func firstError(run *runfile.Run) string {
	for _, r := range run.Requests {
		if !r.OK() {
			return r.Error
		}
	}
	return ""
}

func toolInfo() runfile.Tool {
	ver, rev := buildVersion()
	return runfile.Tool{Name: "tokenpulse", Version: ver, Commit: rev, GoVersion: runtime.Version()}
}

// stopRules are the reasons a run stops before its end: credentials the
// target refuses, and a target that is not there.
func stopRules(keyEnv, target string) func(*runfile.Request) error {
	creds, dead := refusedCredentials(keyEnv), deadTarget(deadTargetRequests, target)
	return func(r *runfile.Request) error {
		if err := creds(r); err != nil {
			return err
		}
		return dead(r)
	}
}

// deadTargetRequests is how many requests in a row must fail to connect,
// before any reaches the target, for deadTarget to stop the run.
const deadTargetRequests = 3

// deadTarget stops a run when its first n finished requests all failed to
// connect (refused, DNS, TLS: no byte of an answer): nothing listens
// there, and the rest of the run would say the same only at its end.
// Once any request reached the target, it never stops a run.
func deadTarget(n int, target string) func(*runfile.Request) error {
	var mu sync.Mutex
	failed, reached := 0, false
	return func(r *runfile.Request) error {
		if r == nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if reached || r.OK() || r.ErrorKind != stream.KindConnect {
			reached = true
			return nil
		}
		if failed++; failed < n {
			return nil
		}
		return fmt.Errorf("stopped: the first %d requests could not connect to the target (%s); is it running at %s?", failed, r.Error, target)
	}
}

// refusedCredentials stops a run at the first request the target refuses
// for its credentials: every later one would fail the same way.
func refusedCredentials(keyEnv string) func(*runfile.Request) error {
	return func(r *runfile.Request) error {
		if r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden {
			return nil
		}
		hint := "set the API key in $" + keyEnv + " or name another variable with --api-key-env"
		if os.Getenv(keyEnv) != "" {
			hint = "the key in $" + keyEnv + " was refused"
		}
		return fmt.Errorf("stopped: the target answered %d (%s); %s", r.Status, r.Error, hint)
	}
}
