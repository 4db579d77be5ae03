package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"

	"github.com/tokenpulse/tokenpulse/report/svg"
	"github.com/tokenpulse/tokenpulse/runfile"
)

//go:embed comparepage.tmpl
var comparePageSource string

var comparePageTemplate = template.Must(template.New("compare").Parse(comparePageSource))

// ComparisonPage is a comparison shown on a page of its own: `tokenpulse
// compare --report html`, and an A/B's ab.html.
type ComparisonPage struct {
	// Title heads the page; Facts are its (label, value) lines: the
	// two sides, their models and sizes.
	Title string
	Facts [][2]string
	// Comparison is the judged comparison (baseline.Record of compare's
	// report).
	Comparison *runfile.Comparison
}

type comparePageView struct {
	Title string
	Facts [][2]string
	C     *comparisonView
	Chart template.HTML
}

// ComparisonHTML writes p as one self-contained HTML page: the facts,
// the result and the rule that judged each change (tolerances, floor,
// alpha, noise band), a chart of each figure's relative change against
// its tolerance (DeltaChart), and the table of every change with its
// base and new figures, delta, noise band, p-value and verdict. Inline
// CSS and SVG, no script, nothing fetched.
func ComparisonHTML(w io.Writer, p ComparisonPage) error {
	if p.Comparison == nil {
		return fmt.Errorf("comparison page: no comparison")
	}
	v := comparePageView{Title: p.Title, Facts: p.Facts, C: newComparisonView(p.Comparison)}
	if len(p.Comparison.Changes) > 0 {
		v.Chart = template.HTML(DeltaChart(p.Comparison).SVG)
	}
	if err := comparePageTemplate.Execute(w, v); err != nil {
		return fmt.Errorf("comparison page: %w", err)
	}
	return nil
}

// deltaClip is the largest relative change the delta chart draws to
// scale (±200 %); a larger one is drawn to the edge and says its value.
const deltaClip = 2.0

// DeltaChart draws each change of c as a bar of its relative change
// (new against base; positive is higher), over a grey band of ± the
// tolerance it was held to: red when judged a regression, green when an
// improvement, grey otherwise. Times and error rates are worse higher;
// rates (requests/s, tokens/s, goodput) worse lower, which the verdict
// colours already account for. Each bar is a <g class="delta"> with
// data-metric, data-scope and data-status.
func DeltaChart(c *runfile.Comparison) Chart {
	const (
		w, left, right, top, rowH, bottom = 760.0, 230.0, 70.0, 40.0, 18.0, 36.0
	)
	h := top + rowH*float64(max(len(c.Changes), 1)) + bottom
	title := "Change of each figure, new against base"
	ch := newChart(w, h, title, "chart deltas")
	ch.Text(10, 16, title, svg.A("fill", colText), svg.A("font-weight", "600"))
	ch.Text(10, 32, "bar: relative change · grey band: the tolerance the figure is held to · red: regression · green: improvement", svg.A("fill", colMuted))
	// Each side of 0 as far as the changes and tolerances reach, in
	// round steps, at most deltaClip.
	lo, hi := 0.1, 0.1
	for _, x := range c.Changes {
		lo = math.Max(lo, math.Max(-x.Relative, x.Tolerance))
		hi = math.Max(hi, math.Max(x.Relative, x.Tolerance))
	}
	lo, hi = math.Min(svg.NiceMax(lo), deltaClip), math.Min(svg.NiceMax(hi), deltaClip)
	xs := svg.Linear{D0: -lo, D1: hi, R0: left, R1: w - right}
	bottomY := top + rowH*float64(len(c.Changes))
	for _, t := range xs.Ticks(8) {
		ch.Line(xs.Map(t), top, xs.Map(t), bottomY, svg.A("stroke", colGrid))
		ch.Text(xs.Map(t), bottomY+14, fmt.Sprintf("%+.0f%%", t*100), svg.A("fill", colMuted), svg.A("text-anchor", "middle"), svg.A("font-size", "10"))
	}
	ch.Line(xs.Map(0), top, xs.Map(0), bottomY, svg.A("stroke", colAxis))
	for i, x := range c.Changes {
		y := top + rowH*float64(i)
		if x.Tolerance > 0 {
			ch.Rect(xs.Map(-math.Min(x.Tolerance, lo)), y+1, xs.Map(math.Min(x.Tolerance, hi))-xs.Map(-math.Min(x.Tolerance, lo)), rowH-2, svg.A("fill", "#eee"))
		}
		col := "#9e9e9e"
		switch x.Status {
		case runfile.ChangeRegressed:
			col = colStall
		case runfile.ChangeImproved:
			col = "#2e7d32"
		}
		rel := math.Max(-lo, math.Min(hi, x.Relative))
		ch.Group(svg.Class("delta"), svg.A("data-metric", x.Metric), svg.A("data-scope", x.Scope), svg.A("data-status", string(x.Status)))
		ch.Title(changeLine(x) + ": " + string(x.Status))
		fittedText(ch, left-8, y+13, x.Scope+" "+x.Metric, left-8-chartPad, fontSize, svg.A("fill", colText), svg.A("text-anchor", "end"))
		x0, x1 := xs.Map(math.Min(0, rel)), xs.Map(math.Max(0, rel))
		ch.Rect(x0, y+4, math.Max(x1-x0, 1), rowH-8, svg.A("fill", col))
		label := "-"
		if x.Base != 0 {
			label = fmt.Sprintf("%+.1f%%", x.Relative*100)
		}
		ch.Text(w-right+6, y+13, label, svg.A("fill", col), svg.A("font-size", "10"))
		ch.End()
	}
	ch.Text(w-right, h-8, "relative change (new − base) ÷ base", svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	return Chart{Name: "deltas", Title: title, SVG: ch.Bytes()}
}
