// Package delivery takes a judged run out of the machine, in the one
// order that lets each step use the one before: its run directory
// published to object storage first, then the alert sent, linking the
// published report. Every step is tried even when one before failed; the
// failures come back joined, and the run directory is never changed.
//
//	out, err := delivery.Deliver(ctx, delivery.Config{Dest: &dest, Webhook: url}, run, dir, regressions)
package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/notify"
	"github.com/tokenpulse/tokenpulse/internal/publish"
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Config is where a run goes.
type Config struct {
	// Dest, when set, is where the run directory is published; Presign,
	// when > 0, links the alert to a presigned report URL valid this long.
	Dest    *publish.Dest
	Presign time.Duration
	// Webhook and SMTP, when set, are the alert's channels.
	Webhook string
	SMTP    *notify.SMTPConfig
	// Log, when set, is told of each step's progress and outcome.
	Log io.Writer
}

// Outcome is what the delivery made.
type Outcome struct {
	// ReportURL is the published report's address, "" when none.
	ReportURL string
	// Alerted is true when an alert was sent.
	Alerted bool
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format, args...)
	}
}

// Deliver publishes dir (cfg.Dest) and then alerts on run (cfg.Webhook,
// cfg.SMTP) with its regressions against the base (lines of
// compare.RegressionLine; nil when none was found or none asked), the
// alert linking the report just published. A mail attaches the
// offenders' timelines and the run's flame graph.
func Deliver(ctx context.Context, cfg Config, run *runfile.Run, dir string, regressions []string) (Outcome, error) {
	var out Outcome
	var errs []error
	if cfg.Dest != nil {
		res, err := publish.Upload(ctx, *cfg.Dest, dir, publish.Options{
			PresignExpiry: cfg.Presign,
			Progress: func(done, total int, name string) {
				cfg.logf("tokenpulse: published %d/%d %s\n", done, total, name)
			},
		})
		if res != nil {
			out.ReportURL = res.ReportURL
		}
		if err != nil {
			errs = append(errs, err)
		} else {
			cfg.logf("tokenpulse: published to %s\n", cfg.Dest)
			if out.ReportURL != "" {
				cfg.logf("tokenpulse: report at %s\n", out.ReportURL)
			}
		}
	}
	if cfg.Webhook != "" || cfg.SMTP != nil {
		ch := notify.Channels{Webhook: cfg.Webhook, SMTP: cfg.SMTP}
		if cfg.SMTP != nil {
			ch.Attachments = notify.Timelines(run, report.Options{})
			ch.Attachments = append(ch.Attachments, notify.FlameGraph(run, dir)...)
		}
		sent, err := notify.Send(ctx, run, out.ReportURL, regressions, ch)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("alert: %w", err))
		case sent:
			out.Alerted = true
			cfg.logf("tokenpulse: alert sent\n")
		default:
			cfg.logf("tokenpulse: nothing crossed or regressed; no alert sent\n")
		}
	}
	return out, errors.Join(errs...)
}
