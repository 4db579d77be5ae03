// Package notify tells people when a run went wrong: a JSON message to a
// chat webhook (Slack-compatible: a "text" line, Block Kit blocks, and a
// "tokenpulse" object with the same facts as structured fields) and an
// e-mail with the offending prompts' token timelines attached as SVG.
//
// An alert is built from the run file, the address of the published report
// and the regressions that compare found; it is sent only when something
// was crossed or regressed:
//
//	if notify.ShouldAlert(run, regressions) {
//		msg := notify.Build(run, reportURL, regressions)
//		err := notify.Webhook(ctx, os.Getenv("ALERT_WEBHOOK"), msg)
//
//		cfg, err := notify.ParseSMTP("smtp://ci@mail.example.com:587?from=ci@example.com&to=perf@example.com", os.Getenv)
//		err = notify.Mail(ctx, cfg, msg, notify.Timelines(run, report.Options{}))
//	}
//
// The message carries: the device (label or host and CPU), OS, model,
// target, each crossed threshold with its measured value beside its limit,
// the offending prompts and requests, the regressions, and the report link.
//
// Webhook posts with a timeout, retries on 5xx and 429 (honouring
// Retry-After) and fails at once on any other 4xx; its errors never contain
// the webhook URL, whose path is a secret for most chat services. Mail
// speaks SMTP with STARTTLS by default (implicit TLS for smtps://, none
// only when asked), and refuses to send a password in the clear to a host
// other than loopback.
//
// All functions are safe for concurrent use; a Message is a plain value.
package notify
