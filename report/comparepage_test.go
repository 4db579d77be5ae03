package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

func sampleComparison() *runfile.Comparison {
	return &runfile.Comparison{
		Base: "base.json", Tolerance: 0.1, FloorMS: 2, Alpha: 0.01, Regressions: 1,
		Rule: "a regression is worse than the base by more than 10% with p < 0.01",
		Changes: []runfile.Change{
			{Scope: "overall", Metric: "ttft.p95", Unit: "ms", Base: 40, New: 300, Delta: 260, Relative: 6.5, P: 0.001, Status: runfile.ChangeRegressed, Tolerance: 0.25},
			{Scope: "overall", Metric: "gap.p50", Unit: "ms", Base: 10, New: 9, Delta: -1, Relative: -0.1, P: 0.2, Status: "within tolerance", Tolerance: 0.1,
				Band: &runfile.Band{Lo: 8, Hi: 12, Runs: 5}},
			{Scope: "overall", Metric: "tpot.mean", Unit: "ms", Base: 10, New: 5, Delta: -5, Relative: -0.5, P: 0.001, Status: runfile.ChangeImproved, Tolerance: 0.1},
		},
	}
}

// The comparison page shows the rule, every change with its delta,
// p-value and noise band, and a chart whose bars stay inside it.
func TestComparisonHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := ComparisonHTML(&buf, ComparisonPage{Title: "base against new", Facts: [][2]string{{"base", "base.json"}}, Comparison: sampleComparison()}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"The rule applied", "a regression is worse than the base by more than 10% with p &lt; 0.01",
		"&#43;260.00 (&#43;650.0%)", "0.0010", "[8.0 ms, 12.0 ms]", `<tr class="regressed">`, "improved", "1 regression in 3 figures compared"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "<link", "<img", " src=", " href="} {
		if strings.Contains(page, bad) {
			t.Errorf("page has %q: not self-contained", bad)
		}
	}
	root := parseSVG(t, DeltaChart(sampleComparison()).SVG)
	bars := root.find("delta")
	if len(bars) != 3 {
		t.Fatalf("%d bars, want 3", len(bars))
	}
	for _, b := range bars {
		for _, n := range b.Nodes {
			if n.XMLName.Local != "rect" {
				continue
			}
			if x0, x1 := num(t, n, "x"), num(t, n, "x")+num(t, n, "width"); x0 < 0 || x1 > 760-70+1 {
				t.Errorf("%s bar %.0f–%.0f leaves the plot", b.attr("data-metric"), x0, x1)
			}
		}
	}
	if err := ComparisonHTML(&buf, ComparisonPage{}); err == nil {
		t.Error("a page without a comparison: want an error")
	}
}
