package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/internal/android"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// ANSI colours for Text with Options.Color.
const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiBold  = "\x1b[1m"
	ansiReset = "\x1b[0m"
)

// Text writes the terminal summary of r: a header naming the target,
// model, device and suite; the cold request apart; a table of every
// category and the overall warm figures (times in ms); the verdicts with
// their first offenders; the errors grouped by message; the experience rows the run triggers; and the
// run's warnings. The table is plain aligned text; colour only with
// o.Color.
func Text(w io.Writer, r *runfile.Run, o Options) error {
	bw := bufio.NewWriter(w)
	t := &textWriter{w: bw, color: o.Color}
	t.header(r)
	t.cold(r)
	t.table(r)
	t.reasoning(r)
	t.browser(r)
	t.turns(r)
	t.scenario(r)
	t.verdicts(r)
	t.errors(r)
	t.comparison(r)
	t.experience(r)
	t.warnings(r)
	return bw.Flush()
}

type textWriter struct {
	w     *bufio.Writer
	color bool
}

func (t *textWriter) paint(code, s string) string {
	if !t.color {
		return s
	}
	return code + s + ansiReset
}

func (t *textWriter) printf(format string, args ...any) { fmt.Fprintf(t.w, format, args...) }

func (t *textWriter) header(r *runfile.Run) {
	name := r.Tool.Name
	if name == "" {
		name = "tokenpulse"
	}
	t.printf("%s %s, run started %s\n", t.paint(ansiBold, name), orDash(r.Tool.Version), r.StartedAt.UTC().Format(time.RFC3339))
	if r.Interrupted {
		t.printf("%s\n", t.paint(ansiRed, "interrupted: the run was stopped before it finished; figures cover what was measured"))
	}
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	api := r.Target.API
	if api != "" {
		api = " (" + api + " API)"
	}
	fmt.Fprintf(tw, "target\t%s%s\n", orDash(r.Target.URL), api)
	fmt.Fprintf(tw, "model\t%s, backend %s\n", orDash(r.Target.Model), orDash(r.Target.Backend))
	fmt.Fprintf(tw, "device\t%s\n", orDash(deviceLine(r.Device)))
	if heat := android.Note(r.Device.Android); heat != "" {
		fmt.Fprintf(tw, "heat\t%s\n", heat)
	}
	c := countRequests(r)
	suite := orDash(r.Config.Suite)
	fmt.Fprintf(tw, "suite\t%s, seed %d, %d requests (%s), %s\n",
		suite, r.Config.Seed, c.Total, c.breakdown(), plural(c.Errors, "error"))
	tw.Flush()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func (t *textWriter) cold(r *runfile.Run) {
	g := r.Summary.Cold
	if g == nil && r.ColdStart == nil {
		return
	}
	t.printf("\n")
	if g != nil {
		label := "cold request"
		ttft := "TTFT " + ms(g.TTFTMs, g.TTFTMs.Mean) + " ms"
		if g.Requests > 1 {
			label = fmt.Sprintf("cold requests (%d)", g.Requests)
			ttft = "TTFT p50 " + ms(g.TTFTMs, g.TTFTMs.P50) + " ms, max " + ms(g.TTFTMs, g.TTFTMs.Max) + " ms"
		}
		t.printf("%s  %s (visible %s ms), gap max %s ms, %s", label, ttft,
			ms(g.VisibleTTFTMs, g.VisibleTTFTMs.Mean), ms(g.GapMs, g.GapMs.Max), plural(g.OutputTokens, "token"))
		if g.Errors > 0 {
			t.printf(", %s", plural(g.Errors, "error"))
		}
		t.printf("\n")
	}
	if cs := r.ColdStart; cs != nil {
		t.printf("  cold start: %s\n", coldStartLine(cs))
	}
}

func coldStartLine(cs *runfile.ColdStart) string {
	s := fmt.Sprintf("load %s ms, page-in %s ms, KV init %s ms, first forward %s ms, total %s ms",
		fmtMS(cs.LoadMS), fmtMS(cs.PageInMS), fmtMS(cs.KVInitMS), fmtMS(cs.FirstForwardMS), fmtMS(cs.TotalMS))
	if cs.ProcessStartMS > 0 {
		s += fmt.Sprintf("; process start to ready %s ms", fmtMS(cs.ProcessStartMS))
	}
	return s
}

// tableColumns are the columns of the per-scope table, shared by Text and
// HTML.
var tableColumns = []string{"reqs", "errors", "ttft p50", "ttft p95", "ttft p99", "vis ttft p95",
	"tpot mean", "gap p50", "gap p95", "gap p99", "gap max", "gap std", "tok/event"}

// tableRow returns the cells of g under tableColumns.
func tableRow(g runfile.Group) []string {
	tpe := "-"
	if g.TokensPerEvent > 0 {
		tpe = strconv.FormatFloat(g.TokensPerEvent, 'f', 2, 64)
	}
	return []string{
		strconv.Itoa(g.Requests), strconv.Itoa(g.Errors),
		ms(g.TTFTMs, g.TTFTMs.P50), ms(g.TTFTMs, g.TTFTMs.P95), ms(g.TTFTMs, g.TTFTMs.P99),
		ms(g.VisibleTTFTMs, g.VisibleTTFTMs.P95),
		ms(g.TPOTMs, g.TPOTMs.Mean),
		ms(g.GapMs, g.GapMs.P50), ms(g.GapMs, g.GapMs.P95), ms(g.GapMs, g.GapMs.P99), ms(g.GapMs, g.GapMs.Max),
		ms(g.GapMs, g.GapMs.Std), tpe,
	}
}

// batchWarning is the line a report shows for a group whose endpoint
// sends more than one token per event.
func batchWarning(name string, g runfile.Group) string {
	return fmt.Sprintf("%s: %.2f tokens per event: the endpoint batches tokens, so gaps are per event, not per token", name, g.TokensPerEvent)
}

func (t *textWriter) table(r *runfile.Run) {
	gs := groups(r)
	width := len("scope")
	for _, g := range gs {
		width = max(width, len(g.Name))
	}
	t.printf("\nwarm requests (times in ms; %s)\n", tableLegend)
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t%s\t\n", width, "scope", strings.Join(tableColumns, "\t"))
	for _, g := range gs {
		fmt.Fprintf(tw, "%-*s\t%s\t\n", width, g.Name, strings.Join(tableRow(g.G), "\t"))
	}
	tw.Flush()
	for _, g := range gs {
		if measure.Batched(g.G) {
			t.printf("%s %s\n", t.paint(ansiRed, "!"), batchWarning(g.Name, g.G))
		}
	}
	if note := perEventOnlyNote(r); note != "" {
		t.printf("%s %s\n", t.paint(ansiRed, "!"), note)
	}
	if s := serverAccount(r); s != "" {
		t.printf("%s\n", s)
	}
	if s := gaugesLine(r); s != "" {
		t.printf("%s\n", s)
	}
	if s := loadLine(r); s != "" {
		t.printf("%s\n", s)
	}
	if s := traceLine(r); s != "" {
		t.printf("%s\n", s)
	}
	if s := goodputLine(r); s != "" {
		t.printf("%s\n", s)
	}
}

func (t *textWriter) verdicts(r *runfile.Run) {
	if len(r.Verdicts) == 0 {
		return
	}
	head := "verdicts: " + verdictHeadline(r)
	if len(gate.Failed(r.Verdicts)) > 0 {
		head = t.paint(ansiRed, head)
	}
	t.printf("\n%s\n", head)
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	for _, v := range r.Verdicts {
		if !v.Judged() {
			fmt.Fprintf(tw, "  – %s\t%s\t%s, limit %s\n", v.Rule, v.Scope, notJudgedLine(v), fmtLimit(v.Limit, v.Unit))
			continue
		}
		mark := t.paint(ansiGreen, "✓")
		if v.Failed() {
			mark = t.paint(ansiRed, "✗")
		}
		fmt.Fprintf(tw, "  %s %s\t%s\t%s vs limit %s", mark, v.Rule, v.Scope, fmtValue(v.Value, v.Unit), fmtLimit(v.Limit, v.Unit))
		if v.Failed() && len(v.Offenders) > 0 {
			fmt.Fprintf(tw, "\toffenders: %s", offenderList(r, v, 3))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// errors lists the failed requests grouped by message (errorLines).
func (t *textWriter) errors(r *runfile.Run) {
	lines := errorLines(r)
	if len(lines) == 0 {
		return
	}
	t.printf("\n%s\n", t.paint(ansiRed, "errors by message"))
	for _, l := range lines {
		t.printf("  %s\n", l)
	}
}

func (t *textWriter) experience(r *runfile.Run) {
	if len(r.Experience) == 0 {
		return
	}
	t.printf("\nwhat users feel\n")
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	for _, e := range r.Experience {
		fmt.Fprintf(tw, "  %s\t%s\t%s: %s", e.Scope, e.Experience, e.Rule, fmtValue(e.Value, e.Unit))
		if e.Impact != "" {
			fmt.Fprintf(tw, "\timpact: %s", e.Impact)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func (t *textWriter) warnings(r *runfile.Run) {
	if len(r.Warnings) == 0 {
		return
	}
	t.printf("\n")
	for _, w := range r.Warnings {
		t.printf("%s %s\n", t.paint(ansiRed, "warning:"), w)
	}
}

func (t *textWriter) scenario(r *runfile.Run) {
	rows := scenarioRows(r)
	if len(rows) == 0 {
		return
	}
	t.printf("\n%s (times in ms)\n", scenarioSummary(r))
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  %s\t\n", strings.Join(scenarioColumns, "\t"))
	for _, row := range rows {
		fmt.Fprintf(tw, "  %s\t\n", strings.Join(row, "\t"))
	}
	tw.Flush()
}

// comparison shows the comparison with an earlier run: its result, each
// regression, and its notes.
func (t *textWriter) comparison(r *runfile.Run) {
	c := r.Comparison
	if c == nil {
		return
	}
	head := comparisonTitle(c) + ": " + comparisonResult(c)
	if c.Regressions > 0 {
		head = t.paint(ansiRed, head)
	}
	t.printf("\n%s\n", head)
	if e := comparisonEvidence(c); e != "" {
		t.printf("  %s\n", e)
	}
	for _, x := range c.Regressed() {
		t.printf("  %s %s\n", t.paint(ansiRed, "✗"), changeLine(x))
	}
	for _, n := range c.Notes {
		t.printf("  note: %s\n", n)
	}
}

// turns shows TTFT by turn of the conversation, for a run with
// conversations.
func (t *textWriter) turns(r *runfile.Run) {
	rows := turnRows(r)
	if len(rows) == 0 {
		return
	}
	t.titledTable("TTFT by turn of the conversation (warm requests, times in ms; prompt tokens: the server's count, mean)", turnColumns, rows)
}

// titledTable writes a titled table of right-aligned columns, indented by two.
func (t *textWriter) titledTable(title string, columns []string, rows [][]string) {
	t.printf("\n%s\n", title)
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  %s\t\n", strings.Join(columns, "\t"))
	for _, row := range rows {
		fmt.Fprintf(tw, "  %s\t\n", strings.Join(row, "\t"))
	}
	tw.Flush()
}
