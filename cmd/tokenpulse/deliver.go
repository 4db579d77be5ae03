package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/baseline"
	"github.com/tokenpulse/tokenpulse/compare"
	"github.com/tokenpulse/tokenpulse/internal/delivery"
	"github.com/tokenpulse/tokenpulse/internal/notify"
	"github.com/tokenpulse/tokenpulse/internal/publish"
	"github.com/tokenpulse/tokenpulse/internal/store"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// deliverFlags are the flags that take a judged run out of the machine:
// the comparison with an earlier run, publishing to object storage and
// alerts. bench and report share them.
type deliverFlags struct {
	against      string
	againstAny   bool
	publish      string
	presign      time.Duration
	alertWebhook string
	alertSMTP    string

	dest *publish.Dest
	smtp *notify.SMTPConfig

	// compared is set once the comparison was made (compare), and
	// regressions holds what it found.
	compared    bool
	regressions []string

	// noiseRuns is --noise-runs: K for the noise band of --against last.
	noiseRuns int
}

func (d *deliverFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&d.against, "against", "", "compare with a recorded run (\"last\": the latest of the same target, model and device made with the same suite, API, max tokens, concurrency and scenario; or a history id); a significant regression exits 98")
	fl.IntVar(&d.noiseRuns, "noise-runs", compare.DefaultOptions().NoiseRuns, "K: with --against last and K earlier comparable runs in the history, judge each figure against its run-to-run noise band over the last K (0: never)")
	fl.BoolVar(&d.againstAny, "against-any", false, "with --against: compare even with a run made with other settings (noted in the comparison)")
	fl.StringVar(&d.publish, "publish", "", "upload the run file, reports and charts to s3://BUCKET/PREFIX (credentials and endpoint from the AWS_* environment variables)")
	fl.DurationVar(&d.presign, "publish-presign", 0, "link the alert to a presigned report URL valid this long (for private buckets; at most 168h)")
	fl.StringVar(&d.alertWebhook, "alert-webhook", "", "post a Slack-compatible JSON alert here when a threshold is crossed or a metric regressed")
	fl.StringVar(&d.alertSMTP, "alert-smtp", "", "mail the alert, with the offenders' timelines attached: smtp://USER@HOST:PORT?from=ADDR&to=ADDR (password from TOKENPULSE_SMTP_PASSWORD)")
}

// check parses the destinations before anything is measured.
func (d *deliverFlags) check() error {
	if d.publish != "" {
		dest, err := publish.Parse(d.publish)
		if err != nil {
			return err
		}
		d.dest = &dest
	}
	if d.presign < 0 || d.presign > 7*24*time.Hour {
		return errors.New("--publish-presign must be between 0 and 168h")
	}
	if d.alertSMTP != "" {
		cfg, err := notify.ParseSMTP(d.alertSMTP, os.Getenv)
		if err != nil {
			return err
		}
		d.smtp = &cfg
	}
	if err := compare.CheckNoiseRuns(d.noiseRuns); err != nil {
		return fmt.Errorf("--noise-runs: %w", err)
	}
	if d.againstAny && d.against == "" {
		return errors.New("--against-any goes with --against")
	}
	if d.against != "" {
		if err := store.CheckAgainst(d.against); err != nil {
			return err
		}
	}
	return nil
}

// wantsReports reports whether the run directory must hold the reports
// (publishing uploads them).
func (d *deliverFlags) wantsReports() bool { return d.dest != nil }

// deliveryOutcome is what deliver found: the regressions against the base
// run (nil when none was asked or none was found).
type deliveryOutcome struct {
	regressions []string
	reportURL   string // the published report's address, "" when none
}

// deliver compares (unless compare already did), publishes and alerts, in
// that order. It tries every step even when one fails and returns the
// failures joined; the files in dir are never changed.
func (d *deliverFlags) deliver(ctx context.Context, stderr io.Writer, run *runfile.Run, dir, historyPath string) (deliveryOutcome, error) {
	var out deliveryOutcome
	var errs []error
	if err := d.compare(ctx, stderr, run, historyPath); err != nil {
		errs = append(errs, err)
	}
	out.regressions = d.regressions
	res, err := delivery.Deliver(ctx, delivery.Config{Dest: d.dest, Presign: d.presign, Webhook: d.alertWebhook, SMTP: d.smtp, Log: stderr}, run, dir, out.regressions)
	out.reportURL = res.ReportURL
	return out, errors.Join(append(errs, err)...)
}

// compare compares run with the recorded run --against names, once:
// it prints the comparison to w and records it in run.Comparison (or why
// none was made), so that the reports and the run file rendered after it
// show it. It does nothing without --against. historyPath "" is the
// default history.
func (d *deliverFlags) compare(ctx context.Context, w io.Writer, run *runfile.Run, historyPath string) error {
	if d.against == "" || d.compared {
		return nil
	}
	d.compared = true
	regs, err := d.compareWith(ctx, w, run, historyPath)
	d.regressions = regs
	return err
}

// compareWith compares run with the recorded run named by --against and
// prints the comparison. No earlier run, or only one made with other
// settings, is not an error: there is nothing to regress from; the run
// file says why nothing was compared.
func (d *deliverFlags) compareWith(ctx context.Context, w io.Writer, run *runfile.Run, historyPath string) ([]string, error) {
	opts := compare.DefaultOptions()
	opts.NoiseRuns = d.noiseRuns
	b, err := store.FindBase(ctx, historyPath, d.against, d.againstAny, run, opts.NoiseRuns)
	var none *store.NoBase
	if errors.As(err, &none) {
		fmt.Fprintf(w, "tokenpulse: %s; nothing compared\n", none.Msg)
		run.Comparison = baseline.Skipped(d.against, none.Msg)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--against %s: %w", d.against, err)
	}
	rep := baseline.CompareHistory(b.Runs, run, opts)
	run.Comparison = baseline.Record(rep, d.against, b.Name, b.ID)
	fmt.Fprintf(w, "comparing against %s\n", b.Name)
	if err := rep.WriteText(w); err != nil {
		return nil, err
	}
	var regs []string
	for _, c := range rep.Regressions() {
		regs = append(regs, compare.RegressionLine(c))
	}
	return regs, nil
}
