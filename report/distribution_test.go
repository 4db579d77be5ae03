package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// The CDF holds every warm successful request, overall and per category,
// for TTFT and E2E, and each line climbs to 1 inside its panel.
func TestCDFChartHoldsEveryRequest(t *testing.T) {
	r := reporttest.StallRun()
	root := parseSVG(t, CDFChart(r, Options{}).SVG)
	lines := root.find("cdf-line")
	want := 0 // a line for each scope and metric with a sample
	for _, s := range append([]measure.Scope{measure.Overall}, categoryScopes(r)...) {
		for _, m := range []measure.Metric{measure.TTFT, measure.E2E} {
			if len(measure.Sample(measure.Views(r, s), m)) > 0 {
				want++
			}
		}
	}
	if len(lines) != want || want < 4 {
		t.Fatalf("%d CDF lines, want %d (overall and each category, TTFT and E2E)", len(lines), want)
	}
	for _, l := range lines {
		scope := measure.Overall
		if s := l.attr("data-scope"); s != "overall" {
			scope = measure.Category(s)
		}
		m := measure.Metric(l.attr("data-metric"))
		if got, want := atoi(l.attr("data-n")), len(measure.Sample(measure.Views(r, scope), m)); got != want || want == 0 {
			t.Errorf("%s %s: %d requests, want %d", l.attr("data-scope"), m, got, want)
		}
		var d string
		for _, n := range l.Nodes {
			if n.XMLName.Local == "path" {
				d = n.attr("d")
			}
		}
		// The last step reaches the top of the panel (P = 1).
		last := d[strings.LastIndex(d, "V")+1:]
		if y, _ := strconv.ParseFloat(last, 64); y != 58 {
			t.Errorf("%s %s ends at y=%s, want the top (58)", l.attr("data-scope"), m, last)
		}
	}
}

// The latency-over-time chart has a dot per request with a TTFT, and the
// medians of its slices.
func TestTimeChartHasEveryRequest(t *testing.T) {
	r := reporttest.StallRun()
	root := parseSVG(t, TimeChart(r, Options{}).SVG)
	want := len(measure.Sample(measure.Views(r, measure.Overall), measure.TTFT))
	if got := len(root.find("ttft")); got != want {
		t.Errorf("%d TTFT dots, want %d", got, want)
	}
	if got := len(root.find("p50")); got != 2 {
		t.Errorf("%d median lines, want 2 (TTFT and E2E)", got)
	}
	failed := measure.Count(r).Errors
	if got := len(root.find("failed")); failed > 0 && got != 2*failed {
		t.Errorf("%d failed marks, want %d (one a panel)", got, 2*failed)
	}
}

// The report lists every error message with its count.
func TestHTMLListsErrorsByMessage(t *testing.T) {
	r := reporttest.StallRun()
	gs := measure.ErrorGroups(r)
	if len(gs) == 0 {
		t.Fatal("the fixture has no failed request")
	}
	var buf bytes.Buffer
	if err := HTML(&buf, r, Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	i := strings.Index(page, `<h2 id="errors">`)
	if i < 0 {
		t.Fatal("no errors section")
	}
	for _, g := range gs {
		if !strings.Contains(page[i:], "<td>"+strconv.Itoa(g.Count)+"</td>") || !strings.Contains(page[i:], g.First) {
			t.Errorf("errors section lacks %v", g)
		}
	}
}

func categoryScopes(r *runfile.Run) []measure.Scope {
	var out []measure.Scope
	for _, c := range measure.Categories(r) {
		out = append(out, measure.Category(c))
	}
	return out
}

// Every label of the CDF chart lies inside it and no two overlap.
func TestCDFChartLabelsFit(t *testing.T) {
	root := parseSVG(t, CDFChart(reporttest.StallRun(), Options{}).SVG)
	var boxes []box
	var texts []string
	for _, n := range root.Nodes {
		if n.XMLName.Local != "text" {
			continue
		}
		size := fontSize
		if n.attr("font-size") == "10" {
			size = smallSize
		}
		b := textBox(num(t, n, "x"), num(t, n, "y"), n.Text, size, n.attr("text-anchor"))
		if b.X0 < 0 || b.X1 > 760 {
			t.Errorf("%q runs off the chart: %v", n.Text, b)
		}
		for i, o := range boxes {
			if b.overlaps(o) {
				t.Errorf("%q %v overlaps %q %v", n.Text, b, texts[i], o)
			}
		}
		boxes, texts = append(boxes, b), append(texts, n.Text)
	}
}
