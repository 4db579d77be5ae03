package notify

import (
	"context"
	"errors"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// Channels are where Send delivers an alert; empty ones are skipped.
type Channels struct {
	// Webhook is the webhook URL ("" for none).
	Webhook string
	// SMTP is the mail destination (nil for none).
	SMTP *SMTPConfig
	// Attachments go with the mail (typically Timelines(run, ...)).
	Attachments []Attachment
	// Poster posts to the webhook (nil: the default Poster).
	Poster *Poster
}

// Send alerts on every channel when ShouldAlert says so, and reports
// whether it did. It tries every channel even when one fails, and returns
// their errors joined.
func Send(ctx context.Context, run *runfile.Run, reportURL string, regressions []string, ch Channels) (sent bool, err error) {
	if !ShouldAlert(run, regressions) {
		return false, nil
	}
	msg := Build(run, reportURL, regressions)
	var errs []error
	if ch.Webhook != "" {
		p := ch.Poster
		if p == nil {
			p = &Poster{}
		}
		errs = append(errs, p.Post(ctx, ch.Webhook, msg))
	}
	if ch.SMTP != nil {
		errs = append(errs, Mail(ctx, *ch.SMTP, msg, ch.Attachments))
	}
	return true, errors.Join(errs...)
}
