package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/internal/android"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

//go:embed html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Parse(htmlSource))

// HTML writes the report of r as one self-contained HTML page: inline CSS
// and inline SVG, no JavaScript, nothing loaded from the network. It opens
// with the verdict (a pass or fail banner naming the crossed thresholds),
// then the per-category table, cold against warm, the TTFT waterfall, the
// gap histogram on a log scale, the token-arrival timeline of each
// offending prompt with its stalls marked, the experience rows, every
// verdict, the run's warnings and the methodology.
func HTML(w io.Writer, r *runfile.Run, o Options) error {
	if err := htmlTemplate.Execute(w, newHTMLView(r, o)); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

type htmlView struct {
	Title      string
	Pass       bool
	NoVerdicts bool
	Banner     string
	// Errors are the failed requests grouped by message (errorLines),
	// shown in the banner so that the cause is the first thing read.
	Errors      []string
	Crossed     []verdictView
	Interrupted bool
	Facts       [][2]string
	Columns     []string
	Rows        []tableRowView
	BatchNotes  []string
	// PerEventNote names the scopes whose TPOT is per event (no token
	// counts); "" when none.
	PerEventNote string
	// ServerAccount sets the server's own split of TTFT and its TPOT
	// beside the client's, when the server sent them; "" otherwise.
	ServerAccount string
	// ServerGauges says what the server's own gauges peaked at (bench
	// --scrape); "" without.
	ServerGauges string
	// Comparison is the comparison with an earlier run, nil when none
	// was asked.
	Comparison   *comparisonView
	ColdColumns  []string
	ColdRows     []tableRowView
	ColdStart    string
	Waterfall    chartView
	Gaps         chartView
	Timelines    []chartView
	NoOffenders  bool
	Experience   []experienceView
	Verdicts     []verdictView
	Warnings     []string
	Methodology  []sectionView
	GeneratedBy  string
	MaxTimelines int
	MoreOffender int
	// Load is the throughput per scope, with an open loop's schedule
	// columns, and the load chart.
	LoadColumns []string
	LoadRows    []tableRowView
	Load        chartView
	// Turns is the TTFT-by-turn table and chart, for a run with
	// conversations.
	TurnColumns []string
	TurnRows    [][]string
	Turns       chartView
	// ReasoningRows is the reasoning table (ReasoningColumns), for a run
	// whose requests thought; ThinkingNote says what the visible
	// figures count.
	ReasoningColumns []string
	ReasoningRows    [][]string
	ThinkingNote     string
	// Scenario is the rapid-fire table, when the run is one.
	ScenarioSummary string
	ScenarioColumns []string
	ScenarioRows    [][]string
	// Flame is the flame graph of the run's CPU profile, nil when none.
	Flame *flameView
	// Browser is the section of a browser run (model against
	// measurement, three-layer timelines); nil otherwise.
	Browser *browserView
	// CDF is the distribution of TTFT and E2E over every request, per
	// category; OverTime their latency against the run's time.
	CDF, OverTime chartView
	// ErrorGroups is every error message of the run with its count
	// (measure.ErrorGroups), for the errors table.
	ErrorGroups []measure.ErrorGroup
	// Requests is the table of every warm request, sortable without a
	// script; nil when none.
	Requests *requestsView
	// TraceMatch states how closely a trace replay kept its trace; ""
	// for any other run.
	TraceMatch string
}

type tableRowView struct {
	Name    string
	Cells   []string
	Overall bool
}

type chartView struct {
	Name, Title string
	SVG         template.HTML
}

type verdictView struct {
	Passed                            bool
	Rule, Scope, Source, Value, Limit string
	Offenders                         []offenderView
	// NotJudged is "not judged: no data (why)" for a rule whose scope
	// had no data; Passed then means nothing.
	NotJudged string
}

// comparisonView is the comparison with an earlier run.
type comparisonView struct {
	Title, Result, Method string
	Regressed             bool
	Columns               []string
	Rows                  []comparisonRowView
	Notes                 []string
}

type comparisonRowView struct {
	Cells     []string
	Regressed bool
}

// offenderView is one offender of a verdict, in parts that the page keeps
// whole: a line may break between them but not inside an id.
type offenderView struct {
	PromptID, RequestID string
	Index               int
	Value               string
}

type experienceView struct {
	Scope, Rule, Value, Experience, Impact, Tier string
}

type sectionView struct {
	Title string
	Paras []template.HTML
	Items []template.HTML
	Code  string
}

func newHTMLView(r *runfile.Run, o Options) htmlView {
	v := htmlView{Interrupted: r.Interrupted, Columns: tableColumns}
	v.Title = "tokenpulse report: " + orDash(r.Target.Model)
	if r.Device.Label != "" {
		v.Title += " on " + r.Device.Label
	} else if r.Device.Hostname != "" {
		v.Title += " on " + r.Device.Hostname
	}

	// Verdict first.
	crossed := gate.Failed(r.Verdicts)
	v.Pass = len(crossed) == 0
	switch {
	case len(r.Verdicts) == 0:
		v.NoVerdicts = true
		v.Banner = "No thresholds were set for this run"
	case len(gate.NotJudged(r.Verdicts)) == len(r.Verdicts):
		v.NoVerdicts = true
		v.Banner = "NOT JUDGED: " + verdictHeadline(r)
	case v.Pass:
		v.Banner = "PASS: " + verdictHeadline(r)
	default:
		v.Banner = "FAIL: " + verdictHeadline(r)
	}
	v.Errors = errorLines(r)
	for _, x := range r.Verdicts {
		vv := verdictView{Passed: x.Passed, Rule: x.Rule, Scope: x.Scope, Source: x.Source,
			Value: fmtValue(x.Value, x.Unit), Limit: fmtLimit(x.Limit, x.Unit)}
		if !x.Judged() {
			vv.Passed, vv.NotJudged, vv.Value = false, notJudgedLine(x), "-"
		}
		for _, off := range x.Offenders {
			vv.Offenders = append(vv.Offenders, offenderView{orDash(off.PromptID), orDash(off.RequestID), off.Index, offenderValue(r, x, off)})
		}
		v.Verdicts = append(v.Verdicts, vv)
		if x.Failed() {
			v.Crossed = append(v.Crossed, vv)
		}
	}

	c := countRequests(r)
	api := ""
	if r.Target.API != "" {
		api = " (" + r.Target.API + " API)"
	}
	v.Facts = [][2]string{
		{"Target", orDash(r.Target.URL) + api},
		{"Model", orDash(r.Target.Model) + ", backend " + orDash(r.Target.Backend)},
		{"Device", orDash(deviceLine(r.Device))},
		{"Suite", fmt.Sprintf("%s, seed %d", orDash(r.Config.Suite), r.Config.Seed)},
		{"Requests", fmt.Sprintf("%d (%s), %s", c.Total, c.breakdown(), plural(c.Errors, "error"))},
		{"Started", r.StartedAt.UTC().Format(time.RFC3339)},
	}
	if heat := android.Note(r.Device.Android); heat != "" {
		v.Facts = append(v.Facts, [2]string{"Heat", heat})
	}

	if rows := scenarioRows(r); len(rows) > 0 {
		v.ScenarioSummary, v.ScenarioColumns, v.ScenarioRows = scenarioSummary(r), scenarioColumns, rows
	}
	for _, g := range groups(r) {
		v.Rows = append(v.Rows, tableRowView{Name: g.Name, Cells: tableRow(g.G), Overall: g.Scope == "overall"})
		if measure.Batched(g.G) {
			v.BatchNotes = append(v.BatchNotes, batchWarning(g.Name, g.G))
		}
	}
	v.PerEventNote = perEventOnlyNote(r)
	v.ServerAccount = serverAccount(r)
	v.ServerGauges = gaugesLine(r)
	if c := r.Comparison; c != nil {
		v.Comparison = newComparisonView(c)
	}

	v.ColdColumns = []string{"reqs", "errors", "ttft p50", "ttft max", "vis ttft p50", "gap p50", "gap max", "e2e p50"}
	coldRow := func(name string, g runfile.Group) tableRowView {
		return tableRowView{Name: name, Cells: []string{
			fmt.Sprint(g.Requests), fmt.Sprint(g.Errors),
			ms(g.TTFTMs, g.TTFTMs.P50), ms(g.TTFTMs, g.TTFTMs.Max), ms(g.VisibleTTFTMs, g.VisibleTTFTMs.P50),
			ms(g.GapMs, g.GapMs.P50), ms(g.GapMs, g.GapMs.Max), ms(g.E2EMs, g.E2EMs.P50),
		}}
	}
	if r.Summary.Cold != nil {
		v.ColdRows = append(v.ColdRows, coldRow("cold", *r.Summary.Cold))
	}
	v.ColdRows = append(v.ColdRows, coldRow("warm", r.Summary.Overall))
	if r.ColdStart != nil {
		v.ColdStart = coldStartLine(r.ColdStart)
	}

	wf, gh := Waterfall(r, o), GapHistogram(r, o)
	v.Waterfall = chartView{wf.Name, wf.Title, template.HTML(wf.SVG)}
	v.Gaps = chartView{gh.Name, gh.Title, template.HTML(gh.SVG)}
	cdf, ot := CDFChart(r, o), TimeChart(r, o)
	v.CDF = chartView{cdf.Name, cdf.Title, template.HTML(cdf.SVG)}
	v.OverTime = chartView{ot.Name, ot.Title, template.HTML(ot.SVG)}
	v.ErrorGroups = measure.ErrorGroups(r)
	v.Requests = newRequestsView(r)
	for _, t := range Timelines(r, o) {
		v.Timelines = append(v.Timelines, chartView{t.Name, t.Title, template.HTML(t.SVG)})
	}
	v.Browser = newBrowserView(r, o)
	v.LoadColumns = loadColumns
	open := r.Summary.Overall.ScheduleLagMs.Count > 0
	if open {
		v.LoadColumns = append(append([]string(nil), loadColumns...), lagColumns...)
	}
	for _, g := range groups(r) {
		cells := loadRow(g.G)
		if open {
			lag := lagRow(g.G)
			if lag == nil {
				lag = []string{"-", "-", "-", "-", "-", "-"}
			}
			cells = append(cells, lag...)
		}
		v.LoadRows = append(v.LoadRows, tableRowView{Name: g.Name, Cells: cells, Overall: g.Scope == "overall"})
	}
	lc := LoadChart(r, o)
	v.Load = chartView{lc.Name, lc.Title, template.HTML(lc.SVG)}
	v.TraceMatch = traceLine(r)
	if rows := reasoningRows(r); len(rows) > 0 {
		v.ReasoningColumns, v.ReasoningRows, v.ThinkingNote = reasoningColumns, rows, thinkingNote(r)
	}
	if tc, ok := TurnChart(r, o); ok {
		v.TurnColumns, v.TurnRows = turnColumns, turnRows(r)
		v.Turns = chartView{tc.Name, tc.Title, template.HTML(tc.SVG)}
	}
	v.NoOffenders = len(crossed) == 0
	v.MaxTimelines = o.maxTimelines()
	offenders := map[int]bool{}
	for _, x := range crossed {
		for _, off := range x.Offenders {
			offenders[off.Index] = true
		}
	}
	if n := len(offenders) - len(v.Timelines); n > 0 && !v.NoOffenders {
		v.MoreOffender = n
	}

	for _, e := range r.Experience {
		v.Experience = append(v.Experience, experienceView{Scope: e.Scope, Rule: e.Rule, Value: fmtValue(e.Value, e.Unit),
			Experience: e.Experience, Impact: e.Impact, Tier: e.Tier})
	}
	v.Flame = newFlameView(r, o)
	v.Warnings = r.Warnings
	for _, s := range methodology(r) {
		sv := sectionView{Title: s.Title, Code: s.Code}
		for _, p := range s.Paras {
			sv.Paras = append(sv.Paras, inlineHTML(p))
		}
		for _, it := range s.Items {
			sv.Items = append(sv.Items, inlineHTML(it))
		}
		v.Methodology = append(v.Methodology, sv)
	}
	v.GeneratedBy = fmt.Sprintf("%s %s", orDash(r.Tool.Name), orDash(r.Tool.Version))
	return v
}

// newComparisonView is the table of a comparison: each change's scope,
// metric, base and new figures, delta, noise band, p-value and verdict,
// under the rule that judged them. The run report and the comparison's
// own page (ComparisonHTML) share it.
func newComparisonView(c *runfile.Comparison) *comparisonView {
	cv := &comparisonView{Title: comparisonTitle(c), Result: comparisonResult(c), Regressed: c.Regressions > 0, Notes: c.Notes}
	if c.Skipped != "" {
		return cv
	}
	cv.Method = comparisonMethod(c)
	if e := comparisonEvidence(c); e != "" {
		cv.Method = e + ". " + cv.Method
	}
	cv.Columns = []string{"scope", "metric", "base", "new", "delta", "noise band", "p", "verdict"}
	for _, x := range c.Changes {
		rel := ""
		if x.Base != 0 {
			rel = fmt.Sprintf(" (%+.1f%%)", x.Relative*100)
		}
		cv.Rows = append(cv.Rows, comparisonRowView{Regressed: x.Regressed(), Cells: []string{
			x.Scope, x.Metric, fmtValue(x.Base, x.Unit), fmtValue(x.New, x.Unit),
			fmt.Sprintf("%+.2f%s", x.Delta, rel), bandCell(x), pValue(x), string(x.Status),
		}})
	}
	return cv
}
