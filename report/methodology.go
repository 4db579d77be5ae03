package report

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// docSection is one section of the methodology, rendered both as Markdown
// (Methodology) and as HTML (the report's last part). Text may hold
// `code` spans.
type docSection struct {
	Title string
	Paras []string
	Items []string
	Code  string // a shell command, shown as a code block
}

// Methodology writes a Markdown appendix that a paper can include: the
// tool and its version, the endpoint and API, the definitions of every
// figure (where TTFT starts and ends, gaps, TPOT, the percentile and std
// methods), the warm-up and cold policy, the sample, the hardware and
// model context, the display model behind the visible metrics, the
// thresholds, and the command line that reproduces the run.
func Methodology(w io.Writer, r *runfile.Run) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# Methodology\n")
	for _, s := range methodology(r) {
		fmt.Fprintf(bw, "\n## %s\n", s.Title)
		for _, p := range s.Paras {
			fmt.Fprintf(bw, "\n%s\n", p)
		}
		if len(s.Items) > 0 {
			bw.WriteString("\n")
			for _, it := range s.Items {
				fmt.Fprintf(bw, "- %s\n", it)
			}
		}
		if s.Code != "" {
			fmt.Fprintf(bw, "\n```sh\n%s\n```\n", s.Code)
		}
	}
	return bw.Flush()
}

func methodology(r *runfile.Run) []docSection {
	c := countRequests(r)
	var out []docSection

	// Tool.
	tool := fmt.Sprintf("Measured with %s %s", orDash(r.Tool.Name), orDash(r.Tool.Version))
	var build []string
	if r.Tool.Commit != "" {
		build = append(build, "commit `"+r.Tool.Commit+"`")
	}
	if r.Tool.GoVersion != "" {
		build = append(build, "built with "+r.Tool.GoVersion)
	}
	if len(build) > 0 {
		tool += " (" + strings.Join(build, ", ") + ")"
	}
	tool += fmt.Sprintf(", run file schema %d. The run started at %s", r.SchemaVersion, r.StartedAt.UTC().Format(time.RFC3339))
	if !r.FinishedAt.IsZero() && r.FinishedAt.After(r.StartedAt) {
		tool += fmt.Sprintf(" and took %s", r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond))
	}
	tool += "."
	if r.Interrupted {
		tool += " The run was interrupted before it finished; the figures cover the requests that were measured."
	}
	out = append(out, docSection{Title: "Tool", Paras: []string{tool}})

	// Endpoint.
	api := "OpenAI-compatible chat completions (`POST /v1/chat/completions` with `stream: true`)"
	if r.Target.API == "completions" {
		api = "OpenAI-compatible completions (`POST /v1/completions` with `stream: true`)"
	} else if r.Target.API != "" && r.Target.API != "chat" {
		api = "`" + r.Target.API + "`"
	}
	sources := map[string]int{}
	for _, q := range r.Requests {
		if measure.Counted(&q) && q.OK() {
			sources[orDash(q.TokenSource)]++
		}
	}
	out = append(out, docSection{Title: "Endpoint", Items: []string{
		"URL: `" + orDash(r.Target.URL) + "`",
		"API: " + api + "; responses are Server-Sent Events",
		"Model: `" + orDash(r.Target.Model) + "`, backend " + orDash(r.Target.Backend),
		"Output tokens: from the server's `usage` when the stream carries it (`stream_options.include_usage`), otherwise the count of content events; in this run: " + tokenSources(sources),
	}})

	// Definitions.
	out = append(out, docSection{Title: "Definitions", Paras: []string{
		"All times are read from Go's monotonic clock and stored as nanosecond offsets from the request's start; summaries are in milliseconds.",
	}, Items: []string{
		"`t_start` = 0: the instant the client begins to act on the request, before the body is serialised (the stand-in for the user's tap).",
		"`t_sent`: the request is fully written (`httptrace` WroteRequest); `t_headers`: the response headers are received; `t_first_byte`: the first byte of the body.",
		"`t_token[i]`: the arrival of the i-th output token, the instant the SSE decoder has read the blank line that terminates the i-th event whose delta carries non-empty content. Role-only and usage-only chunks are not tokens; reasoning deltas count as tokens, and an event that carried a reasoning delta and no answer text is a thinking event: the time to the first answer token (`answer_ttft`) and each phase's span and TPOT are computed over the phase's own events.",
		"TTFT = `t_token[0] − t_start`: from before the body is serialised to the first content event decoded. E2E = `t_last_event − t_start`.",
		"Gaps (inter-token latency) = `t_token[i] − t_token[i−1]` for i ≥ 1. Gap statistics pool every gap of every successful warm request of a scope; the max gap is the worst stall a reader sees.",
		"TPOT = `(t_last_event − t_first_event) / (output tokens − tokens of the first event)`: the time per output token after the first event, undefined when no token follows it. It is per token where the token counts are known (the server's per-event counts, or its usage total spread over the events); where no count was given, one token per event is assumed and TPOT and every per-token figure are per event. The TPOT std and percentiles are those of the per-token intervals (each gap divided by the tokens of the event that ended it).",
		"Gap figures are always per event: the time between two content events, whatever each carried. Tokens per event = output tokens ÷ content events; where it exceeds 1 the endpoint batches tokens and gaps are not per token.",
		"Percentiles (p50, p90, p95, p99) use linear interpolation between closest ranks, numpy's default `linear` method: the value at rank `h = (n − 1) · p / 100`, interpolated between `floor(h)` and `ceil(h)`.",
		"Standard deviations are sample standard deviations (divisor n − 1).",
		"Aggregates report, per category and overall, the count, mean, std, min, p50, p90, p95, p99 and max. Failed requests count as errors and add no times.",
	}})

	// Warm-up and cold.
	warm := []string{fmt.Sprintf("%s sent first, only to warm the target; warm-up requests are recorded in the run file and counted in no figure.", plural(c.Warmup, "warm-up request")+wasWere(c.Warmup))}
	if r.Config.Cold || c.Cold > 0 {
		warm = append(warm, fmt.Sprintf("The first request a freshly started server answers is cold. Cold requests (%d here) are reported apart and never averaged into the warm figures.", c.Cold))
	} else {
		warm = append(warm, "No cold request was measured: the target was already running.")
	}
	if cs := r.ColdStart; cs != nil {
		warm = append(warm, "The target reported its cold start: "+coldStartLine(cs)+".")
	}
	out = append(out, docSection{Title: "Warm-up and cold requests", Paras: warm})

	// Sample.
	cats := map[string]int{}
	kinds := map[string]int{}
	for _, q := range r.Requests {
		if !measure.Overall.Has(&q) {
			continue
		}
		cats[q.Category]++
		if !q.OK() {
			kinds[orDash(q.ErrorKind)]++
		}
	}
	arrival := "closed loop"
	switch r.Config.Arrival {
	case "", runfile.ArrivalClosed:
		arrival = fmt.Sprintf("closed loop with %d concurrent %s", max(r.Config.Concurrency, 1), pluralWord(max(r.Config.Concurrency, 1), "stream"))
	case runfile.ArrivalTrace:
		arrival = fmt.Sprintf("a trace replayed at its recorded times (at most %d concurrent)", r.Config.Concurrency)
		if t := r.Config.Trace; t != nil {
			arrival = fmt.Sprintf("the trace `%s` (%s, %d requests) replayed at its recorded times ×1/%s, prompts of its recorded lengths in %s (at most %d concurrent)",
				t.File, t.Format, t.Entries, strconv.FormatFloat(t.Speed, 'g', -1, 64), t.Vocabulary, r.Config.Concurrency)
		}
	default:
		arrival = fmt.Sprintf("%s arrivals at %s requests/s (at most %d concurrent)", r.Config.Arrival, strconv.FormatFloat(r.Config.Rate, 'g', -1, 64), r.Config.Concurrency)
	}
	sample := []string{
		fmt.Sprintf("Prompts from the suite `%s`, drawn with seed %d.", orDash(r.Config.Suite), r.Config.Seed),
		fmt.Sprintf("%d measured requests (%d warm, %d cold) plus %d warm-up; %s.", c.Measured, c.Measured-c.Cold, c.Cold, c.Warmup, plural(c.Errors, "error")),
		"Warm requests per category: " + countsLine(cats, nil) + ".",
		"Load: " + arrival + ".",
	}
	if len(kinds) > 0 {
		sample = append(sample, "Errors by kind: "+countsLine(kinds, nil)+".")
	}
	if lines := errorLines(r); len(lines) > 0 {
		sample = append(sample, "Errors by message (warm-up included): "+strings.Join(lines, "; ")+".")
	}
	if r.Config.MaxTokens > 0 {
		sample = append(sample, fmt.Sprintf("At most %d output tokens per request.", r.Config.MaxTokens))
	}
	if r.Config.TimeoutMS > 0 {
		sample = append(sample, fmt.Sprintf("Request timeout %s ms.", strconv.FormatInt(r.Config.TimeoutMS, 10)))
	}
	if r.Config.Scenario != "" {
		sample = append(sample, "Scenario: `"+r.Config.Scenario+"`.")
	}
	if s := conversationLine(r); s != "" {
		sample = append(sample, s)
	}
	out = append(out, docSection{Title: "Sample", Items: sample})

	// Hardware and model.
	d := r.Device
	hw := []string{}
	if d.Label != "" {
		hw = append(hw, "Device: "+d.Label)
	}
	hw = append(hw,
		fmt.Sprintf("Host: %s, %s/%s, kernel %s", orDash(d.Hostname), orDash(d.OS), orDash(d.Arch), orDash(d.Kernel)),
		fmt.Sprintf("CPU: %s, %d cores; memory %s", orDash(d.CPUModel), d.CPUCores, fmtBytesOrDash(d.MemoryBytes)),
	)
	if d.Tier != "" {
		hw = append(hw, "Judged as device tier `"+d.Tier+"`")
	}
	t := r.Target
	if t.ModelFile != "" || t.ModelSHA256 != "" || t.Quantization != "" || t.ContextLength > 0 || t.Threads > 0 {
		hw = append(hw,
			"Model file: `"+orDash(t.ModelFile)+"`, sha256 `"+orDash(t.ModelSHA256)+"`",
			fmt.Sprintf("Quantisation %s, context %s tokens, %s threads, batch size %s",
				orDash(t.Quantization), intOrDash(t.ContextLength), intOrDash(t.Threads), intOrDash(t.BatchSize)),
		)
	} else {
		hw = append(hw, "Model file, quantisation and threads: not reported by the target")
	}
	out = append(out, docSection{Title: "Hardware and model", Items: hw})

	// Display model.
	disp := measure.Display(r)
	hz, batch := disp.FrameHz, disp.BatchMS()
	out = append(out, docSection{Title: "Visible metrics", Paras: []string{fmt.Sprintf(
		"Visible TTFT and visible gaps model what a reader sees: a token is painted at the first frame of a %s Hz display at or after its arrival plus the client's %s ms render batching window (frames counted from `t_start`). Visible gaps are the pauses between frames that showed new text. They are derived from the arrival times, not measured on a screen.",
		strconv.FormatFloat(hz, 'g', -1, 64), strconv.FormatFloat(batch, 'g', -1, 64))}})
	if b := r.Config.Browser; b != nil {
		out = append(out, docSection{Title: "Measured visible metrics", Paras: []string{browserMethod(b)}})
	}

	// Thresholds: the run's recorded rules, each on the scope it is
	// judged on (gate.RecordedRules), the flags' first.
	var th []string
	recorded, _ := gate.RecordedRules(r)
	for _, src := range []string{gate.SourceFlag, gate.SourceSuite} {
		for _, x := range recorded {
			if x.Source != src {
				continue
			}
			where := scopeWords(x.Scope.String())
			if src == gate.SourceSuite {
				where += ", from the suite"
			}
			th = append(th, "`"+x.Text()+"` ("+where+")")
		}
	}
	if len(th) > 0 || len(r.Verdicts) > 0 {
		paras := []string{fmt.Sprintf("%d of %d verdicts crossed their threshold.", len(gate.Failed(r.Verdicts)), len(r.Verdicts))}
		if nj := gate.NotJudged(r.Verdicts); len(nj) > 0 {
			var parts []string
			for _, v := range nj {
				parts = append(parts, "`"+v.Rule+"` on "+v.Scope+": "+notJudgedLine(v))
			}
			what := fmt.Sprintf("%d verdicts were", len(nj))
			if len(nj) == 1 {
				what = "1 verdict was"
			}
			paras = append(paras, what+" not judged, because the scope had nothing to measure; a rule not judged neither passes nor fails: "+strings.Join(parts, "; ")+".")
		}
		out = append(out, docSection{Title: "Thresholds", Paras: paras, Items: th})
	}

	// Comparison.
	if c := r.Comparison; c != nil {
		sec := docSection{Title: "Comparison with an earlier run"}
		if c.Skipped != "" {
			sec.Paras = []string{fmt.Sprintf("A comparison with an earlier run was asked for (`--against %s`) and not made: %s.", c.Against, c.Skipped)}
		} else {
			base := orDash(c.Base)
			if s := baseStarted(c); s != "" && !strings.Contains(base, s) {
				base += ", started " + s
			}
			sec.Paras = []string{
				fmt.Sprintf("The run was compared with %s (`--against %s`), a run of the same target, model and device made with the same suite, API, maximum output tokens, concurrency, arrival and scenario, unless a note below says otherwise. Per scope and metric, %s.", base, c.Against, comparisonMethod(c)),
				"Result: " + comparisonResult(c) + ".",
			}
			for _, x := range c.Regressed() {
				sec.Items = append(sec.Items, "Regression: "+changeLine(x))
			}
		}
		for _, n := range c.Notes {
			sec.Items = append(sec.Items, "Note: "+n)
		}
		out = append(out, sec)
	}

	if sec, ok := profileSection(r); ok {
		out = append(out, sec)
	}

	// Reproduce.
	repro := docSection{Title: "Reproduce"}
	if len(r.CommandLine) > 0 {
		repro.Paras = []string{"This command line reproduces the run:"}
		repro.Code = shellQuote(r.CommandLine)
	} else {
		repro.Paras = []string{"The run file does not record the command line that made it."}
	}
	out = append(out, repro)
	return out
}

// tokenSources says how many successful requests took their token count
// from where: "11 counted from events".
func tokenSources(m map[string]int) string {
	if len(m) == 0 {
		return "no successful request"
	}
	// Every source a request can name (runfile.TokenSource), so that no
	// count is left out and the sentence never ends on its colon; an
	// unknown one is named as it is.
	how := map[string]string{
		string(runfile.TokensUsage):     "from usage",
		string(runfile.TokensEvents):    "counted from events",
		string(runfile.TokensServer):    "from the server's per-event counts",
		string(runfile.TokensTokenizer): "counted with the model's vocabulary (--tokenizer)",
		"-":                             "not recorded",
	}
	keys := []string{string(runfile.TokensUsage), string(runfile.TokensEvents), string(runfile.TokensServer), string(runfile.TokensTokenizer), "-"}
	var other []string
	for k := range m {
		if how[k] == "" {
			other = append(other, k)
		}
	}
	sort.Strings(other)
	keys = append(keys, other...)
	var parts []string
	for _, k := range keys {
		if n := m[k]; n > 0 {
			h := how[k]
			if h == "" {
				h = "from " + k
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, h))
		}
	}
	if len(parts) == 0 {
		return "no successful request"
	}
	return strings.Join(parts, ", ")
}

// countsLine formats counts in key order: "complex 6, short 5". names, when
// given, renames keys.
func countsLine(m map[string]int, names map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		n := k
		if names[k] != "" {
			n = names[k]
		}
		parts[i] = fmt.Sprintf("%s %d", n, m[k])
	}
	return strings.Join(parts, ", ")
}

func wasWere(n int) string {
	if n == 1 {
		return " was"
	}
	return " were"
}

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func intOrDash(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func fmtBytesOrDash(b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmtBytes(b)
}

// shellQuote joins argv so that a POSIX shell reads it back unchanged.
func shellQuote(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = quoteArg(a)
	}
	return strings.Join(parts, " ")
}

func quoteArg(a string) string {
	if a == "" {
		return "''"
	}
	safe := true
	for _, c := range a {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:=@%+,", c)) {
			safe = false
			break
		}
	}
	if safe {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// inlineHTML escapes s and turns `code` spans into <code> elements.
func inlineHTML(s string) template.HTML {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		e := template.HTMLEscapeString(p)
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + e + "</code>")
		} else {
			if i%2 == 1 { // unmatched backtick
				b.WriteString("`")
			}
			b.WriteString(e)
		}
	}
	return template.HTML(b.String())
}

// scopeWords names a scope ("overall", "category:complex", ...) in a
// sentence: "whole run", "category complex", "cold request", "turn 2".
func scopeWords(scope string) string {
	switch kind, name, _ := strings.Cut(scope, ":"); kind {
	case "category", "turn":
		return kind + " " + name
	case "cold":
		return "cold request"
	}
	return "whole run"
}
