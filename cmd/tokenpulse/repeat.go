package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/repeats"
	"github.com/tokenpulse/tokenpulse/runner"
)

// runRepeats runs plan's configuration f.repeat times against t, each
// run in DIR/rep-NN, and writes DIR/repeats.json with the mean, sd, CV
// and 95 % interval of each run-level figure. The embedded server is the
// same for every run; its cold request is measured in the first only.
// Each run writes its run.json; none is recorded in the history.
func runRepeats(ctx context.Context, stop context.CancelFunc, cmd *cobra.Command, plan *benchPlan, t *benchTarget) error {
	f := plan.f
	if err := checkRepeatFlags(plan.fs); err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	dir, err := runner.MakeDir(f.out, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("repeats directory: %w", err)
	}
	spec, err := plan.runnerSpec(t, plan.specFromFlags(t))
	if err != nil {
		return err
	}
	cfg := repeats.Config{Spec: spec, Dir: dir, Each: func(_ int, s *runner.Spec) { plan.perRun(ctx, stderr, t, f.quiet, s) }}
	if !f.quiet {
		cfg.Log = stderr
	}
	res, err := repeats.Measure(ctx, f.repeat, cfg)
	if err != nil {
		return err
	}
	signalled := ctx.Err() != nil
	stop()
	return repeatsExit(cmd, res, signalled)
}

// checkRepeatFlags refuses the flags --repeat does not take.
func checkRepeatFlags(fs *pflag.FlagSet) error {
	for _, n := range []string{"model-b", "report", "against", "against-any", "publish", "publish-presign", "alert-webhook", "alert-smtp"} {
		if fs.Changed(n) {
			return usageErr(fmt.Errorf("--repeat does not take --%s: each run writes its run.json ('tokenpulse report DIR/rep-01' renders one), and 'tokenpulse compare BASE_DIR NEW_DIR' compares two sets", n))
		}
	}
	return nil
}

// repeatsExit prints a series' table and returns the exit status its
// findings give: 130 when interrupted (signalled), 1 when a run stopped
// early or every request failed, 99 when a threshold was crossed. bench
// --repeat ends with it, here and on a device (bench --adb).
func repeatsExit(cmd *cobra.Command, res *repeats.Result, signalled bool) error {
	stderr := cmd.ErrOrStderr()
	if err := res.Set.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tokenpulse: repeats written to %s\n", res.Path)
	switch {
	case res.Stopped != nil && signalled:
		return withCode(130, errors.New("interrupted; the runs measured are in "+res.Path))
	case res.Stopped != nil:
		return withCode(exitFailure, fmt.Errorf("%w; the runs measured are in %s", res.Stopped, res.Path))
	case res.AllFailed:
		return withCode(exitFailure, errors.New("every request of every run failed"))
	case len(res.Crossed) > 0:
		fmt.Fprintf(stderr, "tokenpulse: thresholds crossed: %s\n", strings.Join(res.Crossed, "; "))
		return withCode(exitThreshold, nil)
	}
	return nil
}
