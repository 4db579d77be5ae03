package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/android"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// Message is one alert. Marshalled as JSON it is a body that Slack's
// incoming webhooks (and Mattermost, Rocket.Chat and other
// Slack-compatible services) accept: Text is the notification line, Blocks
// lay the facts out, and Alert holds them as structured fields for any
// other receiver.
type Message struct {
	// Text is the fallback text, in Slack's mrkdwn (&, < and > escaped).
	Text string `json:"text"`
	// Blocks are Slack Block Kit blocks.
	Blocks []Block `json:"blocks,omitempty"`
	// Alert holds the facts as plain values.
	Alert Alert `json:"tokenpulse"`
}

// Block is a Slack Block Kit layout block: "header", "section" or
// "context".
type Block struct {
	Type     string       `json:"type"`
	Text     *TextObject  `json:"text,omitempty"`
	Fields   []TextObject `json:"fields,omitempty"`
	Elements []TextObject `json:"elements,omitempty"`
}

// TextObject is a Slack text object: Type is "plain_text" or "mrkdwn".
type TextObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Alert is what went wrong in a run, as plain values.
type Alert struct {
	// Summary is one line: what went wrong where; mails use it as subject.
	Summary string `json:"summary"`
	// Device is the device label, or hostname and CPU.
	Device string `json:"device"`
	// OS is the operating system, kernel and architecture.
	OS string `json:"os"`
	// Model is the model name (and quantisation when known).
	Model string `json:"model"`
	// Target is the measured endpoint and its backend.
	Target string `json:"target"`
	// Tier is the device tier the run was judged against, if any.
	Tier      string    `json:"tier,omitempty"`
	StartedAt time.Time `json:"started_at"`
	// Crossed are the thresholds the run crossed.
	Crossed []Crossed `json:"crossed"`
	// Offenders are the requests that broke a crossed threshold, one entry
	// per request, in prompt order.
	Offenders []Offender `json:"offenders"`
	// NotJudged are the thresholds whose scope had no data: neither
	// passed nor crossed, never a value of 0.
	NotJudged []NotJudged `json:"not_judged,omitempty"`
	// Regressions are compare's findings against the baseline run.
	Regressions []string `json:"regressions"`
	// ReportURL is the link to the HTML report ("" when not published).
	ReportURL string `json:"report_url,omitempty"`
	// Profile is the run's CPU profile, its file name in the run
	// directory ("cpu.pprof"); "" when none was taken.
	Profile string `json:"profile,omitempty"`
	// FlameGraphURL links the flame graph in the published report (the
	// report's "Where the time goes"); "" when not published or no
	// profile was taken.
	FlameGraphURL string `json:"flame_graph_url,omitempty"`
	// Heat is a run on an Android device's heat, before → after, and
	// whether it throttled (bench --adb); "" elsewhere.
	Heat string `json:"heat,omitempty"`
}

// Crossed is one crossed threshold, its measured value beside its limit.
type Crossed struct {
	Rule  string  `json:"rule"`
	Scope string  `json:"scope"`
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit,omitempty"`
	// Prompts are the offending prompt ids, without repeats.
	Prompts []string `json:"prompts,omitempty"`
}

// NotJudged is a threshold that was not judged because its scope had no
// data.
type NotJudged struct {
	Rule  string `json:"rule"`
	Scope string `json:"scope"`
	// Reason says why ("no data: all 3 requests of overall failed").
	Reason string `json:"reason"`
}

// Line is "ttft.p95 < 250ms [overall]: not judged: no data (all 3
// requests of overall failed)".
func (n NotJudged) Line() string {
	reason := strings.TrimSpace(n.Reason)
	if rest, ok := strings.CutPrefix(reason, "no data:"); ok {
		reason = strings.TrimSpace(rest)
	}
	s := fmt.Sprintf("%s [%s]: not judged: no data", n.Rule, n.Scope)
	if reason != "" && reason != "no data" {
		s += " (" + reason + ")"
	}
	return s
}

// Offender is a request that broke a crossed threshold.
type Offender struct {
	PromptID  string `json:"prompt_id"`
	RequestID string `json:"request_id"`
	Category  string `json:"category,omitempty"`
	Rule      string `json:"rule"`
	// Failed marks a request that broke an errors threshold by failing;
	// Status is then its HTTP status (0: none) and Value is unset.
	Failed bool `json:"failed,omitempty"`
	Status int  `json:"status,omitempty"`
	// Value is the request's own measure of the rule's metric, in Unit.
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// ShouldAlert reports whether the run deserves an alert: a threshold was
// crossed or compare found a regression. A threshold not judged (no
// data) alone is no reason to alert.
func ShouldAlert(run *runfile.Run, regressions []string) bool {
	if len(regressions) > 0 {
		return true
	}
	for _, v := range run.Verdicts {
		if v.Failed() {
			return true
		}
	}
	return false
}

// maxListed caps the offenders and regressions spelled out in Text and
// Blocks; Alert always holds all of them.
const maxListed = 10

// Build makes the alert of a run: reportURL is the published report ("" if
// none), regressions are compare's findings (nil if none). Build does not
// decide whether to send; see ShouldAlert.
func Build(run *runfile.Run, reportURL string, regressions []string) Message {
	a := Alert{
		Device:      deviceOf(run.Device),
		OS:          osOf(run.Device),
		Model:       modelOf(run.Target),
		Target:      targetOf(run.Target),
		Tier:        run.Device.Tier,
		StartedAt:   run.StartedAt,
		Regressions: append([]string(nil), regressions...),
		ReportURL:   reportURL,
		Heat:        android.Note(run.Device.Android),
	}
	if run.Profile != nil && run.Profile.File != "" {
		a.Profile = run.Profile.File
		if reportURL != "" {
			a.FlameGraphURL = reportURL + "#" + FlameGraphAnchor
		}
	}
	seen := map[string]bool{}
	for _, v := range run.Verdicts {
		if !v.Judged() {
			a.NotJudged = append(a.NotJudged, NotJudged{Rule: v.Rule, Scope: v.Scope, Reason: v.NoData})
			continue
		}
		if v.Passed {
			continue
		}
		c := Crossed{Rule: v.Rule, Scope: v.Scope, Value: v.Value, Limit: v.Limit, Unit: v.Unit}
		inRule := map[string]bool{}
		for _, o := range v.Offenders {
			if !inRule[o.PromptID] {
				inRule[o.PromptID] = true
				c.Prompts = append(c.Prompts, o.PromptID)
			}
			key := o.RequestID + "\x00" + v.Rule + "\x00" + v.Scope
			if seen[key] {
				continue
			}
			seen[key] = true
			off := Offender{PromptID: o.PromptID, RequestID: o.RequestID, Category: o.Category, Rule: v.Rule, Value: o.Value, Unit: v.Unit}
			if v.Metric == "errors" {
				// gate lists failed requests with their HTTP status as value.
				off.Failed, off.Status, off.Value, off.Unit = true, int(o.Value), 0, ""
			}
			a.Offenders = append(a.Offenders, off)
		}
		a.Crossed = append(a.Crossed, c)
	}
	sort.SliceStable(a.Offenders, func(i, j int) bool { return a.Offenders[i].PromptID < a.Offenders[j].PromptID })
	if a.Crossed == nil {
		a.Crossed = []Crossed{}
	}
	if a.Offenders == nil {
		a.Offenders = []Offender{}
	}
	if a.Regressions == nil {
		a.Regressions = []string{}
	}
	a.Summary = summary(a)
	return Message{Text: slackText(a), Blocks: blocks(a), Alert: a}
}

func summary(a Alert) string {
	var parts []string
	if n := len(a.Crossed); n > 0 {
		parts = append(parts, plural(n, "threshold", "thresholds")+" crossed")
	}
	if n := len(a.Regressions); n > 0 {
		parts = append(parts, plural(n, "regression", "regressions"))
	}
	if len(parts) == 0 {
		parts = append(parts, "no threshold crossed")
	}
	if n := len(a.NotJudged); n > 0 {
		parts = append(parts, fmt.Sprintf("%d not judged (no data)", n))
	}
	what := strings.Join(parts, ", ")
	if what == "no threshold crossed" {
		what = "all thresholds held"
	}
	return fmt.Sprintf("tokenpulse: %s: %s on %s", what, a.Model, a.Device)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// JSON encodes the message as sent to webhooks (without HTML escaping of
// <, > and &, which Slack does not need).
func (m Message) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Num formats a measured value with its unit: "312.5 ms", "6.7%", "3".
func Num(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	switch unit {
	case "":
		return s
	case "%":
		return s + "%"
	}
	return s + " " + unit
}

// Line is the crossed threshold as one line of plain text:
// "gap.max <= 120ms [category:complex]: 300.2 ms, limit 120 ms".
func (c Crossed) Line() string {
	s := fmt.Sprintf("%s [%s]: %s, limit %s", c.Rule, c.Scope, Num(c.Value, c.Unit), stats.FormatLimit(c.Limit, c.Unit))
	if len(c.Prompts) > 0 {
		s += " (" + strings.Join(c.Prompts, ", ") + ")"
	}
	return s
}

// Line is the offender as one line of plain text:
// "complex-02 (request req-0007, category complex): 300.2 ms on gap.max <= 120ms".
func (o Offender) Line() string {
	cat := ""
	if o.Category != "" {
		cat = ", category " + o.Category
	}
	what := Num(o.Value, o.Unit)
	switch {
	case o.Failed && o.Status >= 100 && o.Status < 600:
		what = fmt.Sprintf("failed, HTTP status %d", o.Status)
	case o.Failed:
		what = "failed"
	}
	return fmt.Sprintf("%s (request %s%s): %s on %s", o.PromptID, o.RequestID, cat, what, o.Rule)
}

// PlainText is the alert as a plain-text mail body.
func (a Alert) PlainText() string {
	var b strings.Builder
	b.WriteString(a.Summary + "\n\n")
	fmt.Fprintf(&b, "Device: %s\nOS:     %s\nModel:  %s\nTarget: %s\n", a.Device, a.OS, a.Model, a.Target)
	if a.Tier != "" {
		fmt.Fprintf(&b, "Tier:   %s\n", a.Tier)
	}
	if a.Heat != "" {
		fmt.Fprintf(&b, "Heat:   %s\n", a.Heat)
	}
	if !a.StartedAt.IsZero() {
		fmt.Fprintf(&b, "Run:    %s\n", a.StartedAt.UTC().Format(time.RFC3339))
	}
	if a.ReportURL != "" {
		fmt.Fprintf(&b, "Report: %s\n", a.ReportURL)
	}
	if a.FlameGraphURL != "" {
		fmt.Fprintf(&b, "Flame graph: %s\n", a.FlameGraphURL)
	}
	if a.Profile != "" {
		fmt.Fprintf(&b, "Profile: %s in the run directory (go tool pprof -http=: %s)\n", a.Profile, a.Profile)
	}
	if len(a.Crossed) > 0 {
		b.WriteString("\nThresholds crossed:\n")
		for _, c := range a.Crossed {
			b.WriteString("  - " + c.Line() + "\n")
		}
	}
	if len(a.Offenders) > 0 {
		b.WriteString("\nOffending prompts:\n")
		for _, o := range a.Offenders {
			b.WriteString("  - " + o.Line() + "\n")
		}
	}
	if len(a.NotJudged) > 0 {
		b.WriteString("\nThresholds not judged (no data):\n")
		for _, n := range a.NotJudged {
			b.WriteString("  - " + n.Line() + "\n")
		}
	}
	if len(a.Regressions) > 0 {
		b.WriteString("\nRegressions against the last run:\n")
		for _, r := range a.Regressions {
			b.WriteString("  - " + r + "\n")
		}
	}
	return b.String()
}

// esc escapes text for Slack's mrkdwn.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func listed[T any](items []T, line func(T) string) []string {
	var out []string
	for i, it := range items {
		if i == maxListed {
			out = append(out, fmt.Sprintf("… and %d more", len(items)-maxListed))
			break
		}
		out = append(out, line(it))
	}
	return out
}

func slackText(a Alert) string {
	var b strings.Builder
	b.WriteString(esc(a.Summary))
	for _, c := range a.Crossed {
		b.WriteString("\n• " + esc(c.Line()))
	}
	for _, r := range listed(a.Regressions, func(s string) string { return s }) {
		b.WriteString("\n• regression: " + esc(r))
	}
	for _, n := range listed(a.NotJudged, NotJudged.Line) {
		b.WriteString("\n• " + esc(n))
	}
	if a.ReportURL != "" {
		b.WriteString("\nReport: <" + a.ReportURL + "|report.html>")
	}
	if a.FlameGraphURL != "" {
		b.WriteString("\nWhere the time goes: <" + a.FlameGraphURL + "|flame graph>")
	}
	return clip(b.String(), 3000)
}

func blocks(a Alert) []Block {
	mk := func(s string) TextObject { return TextObject{Type: "mrkdwn", Text: clip(s, 2000)} }
	out := []Block{
		{Type: "header", Text: &TextObject{Type: "plain_text", Text: clip(a.Summary, 150)}},
		{Type: "section", Fields: []TextObject{
			mk("*Device*\n" + esc(a.Device)),
			mk("*OS*\n" + esc(a.OS)),
			mk("*Model*\n" + esc(a.Model)),
			mk("*Target*\n" + esc(a.Target)),
		}},
	}
	if a.Tier != "" {
		out[1].Fields = append(out[1].Fields, mk("*Tier*\n"+esc(a.Tier)))
	}
	if a.Heat != "" {
		out[1].Fields = append(out[1].Fields, mk("*Heat*\n"+esc(a.Heat)))
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		t := "*" + title + "*"
		for _, l := range lines {
			t += "\n• " + esc(l)
		}
		out = append(out, Block{Type: "section", Text: &TextObject{Type: "mrkdwn", Text: clip(t, 3000)}})
	}
	section("Thresholds crossed", listed(a.Crossed, Crossed.Line))
	section("Offending prompts", listed(a.Offenders, Offender.Line))
	section("Regressions", listed(a.Regressions, func(s string) string { return s }))
	section("Not judged (no data)", listed(a.NotJudged, NotJudged.Line))
	if a.ReportURL != "" {
		out = append(out, Block{Type: "section", Text: &TextObject{Type: "mrkdwn", Text: "<" + a.ReportURL + "|Open the report>"}})
	}
	switch {
	case a.FlameGraphURL != "":
		out = append(out, Block{Type: "section", Text: &TextObject{Type: "mrkdwn", Text: "<" + a.FlameGraphURL + "|Where the time goes: the flame graph> of " + esc(a.Profile)}})
	case a.Profile != "":
		out = append(out, Block{Type: "context", Elements: []TextObject{mk("CPU profile: " + esc(a.Profile) + " in the run directory")}})
	}
	return out
}

func deviceOf(d runfile.Device) string {
	if d.Label != "" {
		return d.Label
	}
	s := d.Hostname
	var extra []string
	if d.CPUModel != "" {
		extra = append(extra, d.CPUModel)
	}
	if d.CPUCores > 0 {
		extra = append(extra, plural(d.CPUCores, "core", "cores"))
	}
	if len(extra) > 0 {
		if s != "" {
			s += " "
		}
		s += "(" + strings.Join(extra, ", ") + ")"
	}
	if s == "" {
		return "unknown device"
	}
	return s
}

func osOf(d runfile.Device) string {
	return strings.TrimSpace(strings.Join(nonEmpty(d.OS, d.Kernel, d.Arch), " "))
}

func modelOf(t runfile.Target) string {
	m := t.Model
	if m == "" {
		m = "unknown model"
	}
	if t.Quantization != "" {
		m += " (" + t.Quantization + ")"
	}
	return m
}

func targetOf(t runfile.Target) string {
	if t.Backend != "" {
		return t.URL + " (" + t.Backend + ")"
	}
	return t.URL
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
