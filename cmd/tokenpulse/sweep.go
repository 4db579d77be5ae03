package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/stats"
	"github.com/tokenpulse/tokenpulse/sweep"
)

func init() { commands = append(commands, newSweepCmd) }

// sweepFlags are sweep's own flags; bench's flags describe each step.
type sweepFlags struct {
	rates         string
	concurrencies string
	findMax       bool
	startRate     float64
	resolution    string
	maxSteps      int
	kneeFactor    float64
	kneeFloor     time.Duration
	traceSpeeds   string
}

func newSweepCmd() *cobra.Command {
	var bf benchFlags
	var sf sweepFlags
	bc := newBenchCmdWith(&bf) // bench's flags, bound to bf, describe each step
	cmd := &cobra.Command{
		Use:   "sweep --rates R1,R2,... | --concurrencies C1,C2,... | --find-max",
		Short: "Measure a server at a series of loads: TTFT, gaps and goodput against load, the knee, the capacity",
		Long: `Run bench's workload at a series of loads, one run directory per step,
and summarise them in sweep.json and sweep.html (TTFT p95, gap p95, the
longest stall and goodput against load, the knee marked).

--rates runs an open loop at each rate (requests/s; --arrival, --duration,
--ramp and -n shape each step; -c is the ceiling). --concurrencies runs a
closed loop at each concurrency. --find-max searches for the highest rate
at which every threshold still holds (the suite's, --threshold, --tier and
the error budget): it doubles from --start-rate until a step fails, then
bisects until the highest passing and lowest failing rates are within
--resolution of each other, in at most --max-steps steps. That rate is
the server's capacity under the experience the thresholds describe.

The knee is the first load whose TTFT p95 exceeds both --knee-factor times
the lowest load's and the lowest load's plus --knee-floor: where requests
start to queue.

Without --url the embedded server is started once for every step; its
cold request is measured in the first step only. Each step's run is
recorded in the history as bench records a run (--history, --no-history):
a later bench at the same load and arrival compares with it, as with any
run; 'tokenpulse report DIR/STEP' renders any step.

Exit status: 0 when the sweep finished (with --find-max: when some rate
passed), 99 when --find-max found no rate that passed, 2 for errors of use,
1 when the target could not be measured or a step could not be recorded
in the history, 130 when interrupted (the steps
measured are in sweep.json).`,
		Example: `  tokenpulse sweep --find-max                       # the embedded server's capacity under the default suite
  tokenpulse sweep --url http://127.0.0.1:8080 --rates 1,2,4,8 --duration 30s
  tokenpulse sweep --url http://127.0.0.1:8080 --concurrencies 1,2,4,8,16 -n 60`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bf.apiSet = cmd.Flags().Changed("api")
			return runSweep(cmd, &bf, &sf)
		},
	}
	fl := cmd.Flags()
	fl.AddFlagSet(bc.Flags())
	// bench's flags that a sweep refuses or ignores stay out of its help.
	for _, n := range []string{"rate", "repeat", "model-b", "report", "against", "against-any", "publish", "publish-presign", "alert-webhook", "alert-smtp", "color",
		"browser", "render", "cpu-throttle", "page", "input", "send", "output"} {
		if fl.Lookup(n) != nil {
			_ = fl.MarkHidden(n)
		}
	}
	fl.StringVar(&sf.rates, "rates", "", "comma-separated request rates (per second): one open-loop step each")
	fl.StringVar(&sf.concurrencies, "concurrencies", "", "comma-separated concurrencies: one closed-loop step each")
	fl.BoolVar(&sf.findMax, "find-max", false, "search for the highest rate at which every threshold holds (the capacity)")
	fl.Float64Var(&sf.startRate, "start-rate", 1, "with --find-max, the first rate (requests/s)")
	fl.StringVar(&sf.resolution, "resolution", "10%", "with --find-max, stop when the highest passing and lowest failing rates are this close (relative to the passing one)")
	fl.StringVar(&sf.traceSpeeds, "trace-speeds", "", "with --trace, comma-separated replay speeds: one step each (2 replays twice as fast)")
	fl.IntVar(&sf.maxSteps, "max-steps", 10, "with --find-max, the most steps to run")
	fl.Float64Var(&sf.kneeFactor, "knee-factor", sweep.DefaultKneeRule().Factor, "the knee: TTFT p95 above this many times the lowest load's ...")
	fl.DurationVar(&sf.kneeFloor, "knee-floor", time.Duration(sweep.DefaultKneeRule().FloorMS*float64(time.Millisecond)), "... and above the lowest load's plus this")
	return cmd
}

// parseLoads reads a comma-separated list of positive numbers.
func parseLoads(flag, s string, integer bool) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		v, err := strconv.ParseFloat(part, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) || (integer && v != math.Trunc(v)) {
			kind := "a number > 0"
			if integer {
				kind = "a whole number ≥ 1"
			}
			return nil, fmt.Errorf("--%s: %q is not %s", flag, part, kind)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--%s: no value", flag)
	}
	return out, nil
}

// sweepPlan is what sweep's flags ask for: a list of loads or a search.
type sweepPlan struct {
	kind   sweep.Kind
	loads  []float64
	search *sweep.Search
	knee   sweep.KneeRule
}

func (sf *sweepFlags) plan(cmd *cobra.Command) (*sweepPlan, error) {
	fs := cmd.Flags()
	given := 0
	for _, n := range []string{"rates", "concurrencies", "find-max", "trace-speeds"} {
		if fs.Changed(n) {
			given++
		}
	}
	switch {
	case given == 0:
		return nil, errors.New("give one of --rates, --concurrencies, --find-max or (with --trace) --trace-speeds")
	case given > 1:
		return nil, errors.New("--rates, --concurrencies, --find-max and --trace-speeds exclude each other: give only one")
	case fs.Changed("trace") != fs.Changed("trace-speeds"):
		return nil, errors.New("a trace replay is swept by its speed: give --trace with --trace-speeds")
	case fs.Changed("trace-speed"):
		return nil, errors.New("sweep takes its speeds from --trace-speeds, not --trace-speed")
	}
	if fs.Changed("rate") {
		return nil, errors.New("sweep takes its rates from --rates or --find-max, not --rate")
	}
	for _, n := range []string{"model-b", "report", "against", "against-any", "publish", "publish-presign", "alert-webhook", "alert-smtp"} {
		if fs.Changed(n) {
			return nil, fmt.Errorf("--%s is bench's: a sweep writes each step's run.json and its own sweep.json and sweep.html ('tokenpulse report DIR/STEP' renders a step)", n)
		}
	}
	if fs.Changed("repeat") {
		return nil, errors.New("--repeat repeats one configuration (bench); a sweep runs each step once")
	}
	if fs.Changed("browser") {
		// Only the first step's flags go through bench's checks: without
		// this, a step of 2 in flight would be measured one at a time.
		return nil, errors.New("--browser asks one request at a time in one page, so a sweep could not vary its load: measure the page with bench --browser")
	}
	for _, n := range []string{"start-rate", "resolution", "max-steps"} {
		if fs.Changed(n) && !sf.findMax {
			return nil, fmt.Errorf("--%s goes with --find-max", n)
		}
	}
	if !(sf.kneeFactor >= 1) || sf.kneeFloor < 0 {
		return nil, errors.New("--knee-factor must be ≥ 1 and --knee-floor ≥ 0")
	}
	p := &sweepPlan{kind: sweep.KindRate, knee: sweep.KneeRule{Factor: sf.kneeFactor, FloorMS: stats.Millis(int64(sf.kneeFloor))}}
	var err error
	switch {
	case sf.rates != "":
		p.loads, err = parseLoads("rates", sf.rates, false)
	case sf.traceSpeeds != "":
		p.kind = sweep.KindTraceSpeed
		p.loads, err = parseLoads("trace-speeds", sf.traceSpeeds, false)
	case sf.concurrencies != "":
		p.kind = sweep.KindConcurrency
		p.loads, err = parseLoads("concurrencies", sf.concurrencies, true)
		for _, n := range []string{"arrival", "burstiness", "duration", "ramp"} {
			if fs.Changed(n) {
				return nil, fmt.Errorf("--%s shapes an open loop; --concurrencies runs closed loops", n)
			}
		}
	case sf.findMax:
		res, rerr := compareFraction(sf.resolution)
		if rerr != nil {
			return nil, fmt.Errorf("--resolution: %w", rerr)
		}
		// Name the flag a user set wrong; Validate stays the rule.
		switch {
		case !(sf.startRate > 0) || math.IsInf(sf.startRate, 0):
			return nil, fmt.Errorf("--start-rate must be a rate > 0 (requests/s), not %v", sf.startRate)
		case !(res > 0 && res < 1):
			return nil, fmt.Errorf("--resolution must be above 0 and below 100%%, such as 10%%, not %s", sf.resolution)
		case sf.maxSteps < 2:
			return nil, fmt.Errorf("--max-steps must be at least 2 (a pass and a fail), not %d", sf.maxSteps)
		}
		p.search = &sweep.Search{Start: sf.startRate, Resolution: res, MaxSteps: sf.maxSteps, MinRate: sf.startRate / 16}
		err = p.search.Validate()
	}
	return p, err
}

// first is the load of the first step (for validating bench's flags).
func (p *sweepPlan) first() float64 {
	if p.search != nil {
		return p.search.Start
	}
	return p.loads[0]
}

func runSweep(cmd *cobra.Command, bf *benchFlags, sf *sweepFlags) error {
	sp, err := sf.plan(cmd)
	if err != nil {
		return usageErr(err)
	}
	// Bench's flags are checked as the first step would run.
	switch sp.kind {
	case sweep.KindRate:
		bf.rate = sp.first()
	case sweep.KindTraceSpeed:
		bf.trace.speed = sp.first()
	default:
		bf.concurrency = int(sp.first())
	}
	plan, ctx, stop, err := beginBench(cmd, bf)
	if err != nil {
		return err
	}
	defer plan.close()
	defer stop()
	stderr := cmd.ErrOrStderr()
	history, err := bf.outputs.historyPath(false)
	if err != nil {
		return err
	}
	started := time.Now().UTC()
	dir, err := runner.MakeDir(bf.out, started)
	if err != nil {
		return fmt.Errorf("sweep directory: %w", err)
	}
	t, err := plan.openTarget(ctx, stderr)
	if err != nil {
		return err
	}
	defer t.close()

	sw := &sweep.Sweep{
		SchemaVersion: sweep.SchemaVersion, StartedAt: started, Kind: sp.kind, Target: t.target,
		Suite: plan.suite.Name, Tier: bf.judge.tier, Thresholds: sweepThresholds(plan),
		ColdStart: t.coldStart,
	}
	first := runSpec{rate: bf.rate, concurrency: bf.concurrency, cold: plan.defaultCold(t), coldStart: true, quiet: bf.quiet}
	spec, err := plan.runnerSpec(t, first)
	if err != nil {
		return err
	}
	cfg := sweep.Config{
		Spec: spec, Dir: dir, Warn: stderr,
		Each: func(_ int, s *runner.Spec) { plan.perRun(ctx, stderr, t, bf.quiet, s) },
		Record: func(run *runfile.Run) error {
			_, err := bf.outputs.record(stderr, history, run)
			return err
		},
	}
	if !bf.quiet {
		cfg.Log = stderr
	}
	res, err := sweep.Measure(ctx, sweep.Plan{Kind: sp.kind, Loads: sp.loads, Search: sp.search, Knee: sp.knee}, sw, cfg)
	var le *sweep.LoadError
	if errors.As(err, &le) {
		return usageErr(err)
	}
	if err != nil {
		return err
	}
	signalled := ctx.Err() != nil
	stop()
	if err := sw.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tokenpulse: sweep written to %s (sweep.json, sweep.html; one run directory per step)\n", dir)
	switch {
	case sw.Interrupted && signalled:
		return withCode(130, errors.New("interrupted; the steps measured are in "+filepath.Join(dir, sweep.FileName)))
	case sw.Interrupted:
		return withCode(exitFailure, fmt.Errorf("%w; the steps measured are in %s", res.Stopped, dir))
	case res.AllFailed:
		return withCode(exitFailure, errors.New("every request of every step failed"))
	case sw.Search != nil && sw.Search.Capacity == 0:
		return withCode(exitThreshold, errors.New(sw.Search.String()))
	case res.RecordErr != nil:
		return withCode(exitFailure, fmt.Errorf("%w; the steps' runs are safe in %s", res.RecordErr, dir))
	}
	return nil
}

// isSweepDir reports whether path is a sweep directory (it holds
// sweep.json).
func isSweepDir(path string) bool {
	fi, err := os.Stat(filepath.Join(path, sweep.FileName))
	return err == nil && !fi.IsDir()
}

// renderSweep prints the table of the sweep in dir and writes its
// sweep.html again (tokenpulse report DIR).
func renderSweep(cmd *cobra.Command, dir string) error {
	sw, err := sweep.Load(dir)
	if err != nil {
		return err
	}
	if err := sw.FillTTFT(dir); err != nil {
		// The page is drawn all the same, with the overall figures.
		fmt.Fprintln(cmd.ErrOrStderr(), "tokenpulse: warning: a step's thresholds are not charted:", err)
	}
	if err := sw.WriteHTMLFile(dir); err != nil {
		return err
	}
	if err := sw.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "tokenpulse: %s written\n", filepath.Join(dir, sweep.HTMLFile))
	return nil
}

// sweepThresholds lists every rule a step is judged by (the suite's, the
// flags', the tier's), as the sweep file records them.
func sweepThresholds(plan *benchPlan) []string {
	names := make([]string, 0, len(plan.suite.Categories))
	thresholds := map[string][]string{}
	for _, c := range plan.suite.Categories {
		names = append(names, c.Name)
		thresholds[c.Name] = c.Thresholds
	}
	return plan.rules.Describe(names, thresholds)
}
