package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/repeats"
	"github.com/tokenpulse/tokenpulse/runfile"
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
	spec := plan.specFromFlags(t)
	var dirs []string
	var runs []*runfile.Run
	var runErr error
	for i := range f.repeat {
		name := fmt.Sprintf("rep-%02d", i+1)
		s := spec
		s.out = filepath.Join(dir, name)
		s.cold, s.coldStart = spec.cold && i == 0, i == 0
		if !f.quiet {
			fmt.Fprintf(stderr, "tokenpulse: run %d/%d\n", i+1, f.repeat)
		}
		run, _, stepErr, err := plan.measureRun(ctx, stderr, t, s)
		if err != nil {
			return err
		}
		dirs, runs = append(dirs, name), append(runs, run)
		if stepErr != nil {
			runErr = stepErr
			break
		}
	}
	signalled := ctx.Err() != nil
	stop()
	return finishRepeats(cmd, dir, dirs, runs, runErr, signalled)
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

// finishRepeats writes the repeats file of runs (each in dir/dirs[i]),
// prints its table, and returns the exit status their findings give:
// 130 when interrupted (signalled), 1 when runErr stopped them or every
// request failed, 99 when a threshold was crossed. bench --repeat ends
// with it, here and on a device (bench --adb).
func finishRepeats(cmd *cobra.Command, dir string, dirs []string, runs []*runfile.Run, runErr error, signalled bool) error {
	stderr := cmd.ErrOrStderr()
	var crossed []string
	for i, run := range runs {
		for _, v := range gate.Failed(run.Verdicts) {
			crossed = append(crossed, fmt.Sprintf("%s: [%s] %s", dirs[i], v.Scope, v.Rule))
		}
	}
	set := repeats.Of(dirs, runs)
	path := filepath.Join(dir, repeats.FileName)
	if err := set.Write(path); err != nil {
		return fmt.Errorf("writing the repeats file: %w", err)
	}
	if err := set.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tokenpulse: repeats written to %s\n", path)
	allFailed := true
	for _, run := range runs {
		if !measure.Count(run).AllFailed() {
			allFailed = false
		}
	}
	switch {
	case runErr != nil && signalled:
		return withCode(130, errors.New("interrupted; the runs measured are in "+path))
	case runErr != nil:
		return withCode(exitFailure, fmt.Errorf("%w; the runs measured are in %s", runErr, path))
	case allFailed:
		return withCode(exitFailure, errors.New("every request of every run failed"))
	case len(crossed) > 0:
		fmt.Fprintf(stderr, "tokenpulse: thresholds crossed: %s\n", strings.Join(crossed, "; "))
		return withCode(exitThreshold, nil)
	}
	return nil
}
