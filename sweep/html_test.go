package sweep

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// svgText is a text element of a chart: its class, anchor, position and
// content.
type svgText struct {
	class, anchor, s string
	x, y             float64
}

// box is the text's estimated box (textWidth wide, 11 px tall).
func (t svgText) box() (x0, y0, x1, y1 float64) {
	w := textWidth(t.s)
	switch t.anchor {
	case "middle":
		x0 = t.x - w/2
	case "end":
		x0 = t.x - w
	default:
		x0 = t.x
	}
	return x0, t.y - 9, x0 + w, t.y + 2
}

// parseSVG returns a chart's text elements and the attributes of every
// element with a class.
func parseSVG(t *testing.T, b []byte) (texts []svgText, classed map[string][]map[string]string) {
	t.Helper()
	classed = map[string][]map[string]string{}
	d := xml.NewDecoder(bytes.NewReader(b))
	var open *svgText
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return texts, classed
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range e.Attr {
				attrs[a.Name.Local] = a.Value
			}
			if c := attrs["class"]; c != "" {
				classed[c] = append(classed[c], attrs)
			}
			if e.Name.Local == "text" {
				x, _ := strconv.ParseFloat(attrs["x"], 64)
				y, _ := strconv.ParseFloat(attrs["y"], 64)
				open = &svgText{class: attrs["class"], anchor: attrs["text-anchor"], x: x, y: y}
			}
		case xml.CharData:
			if open != nil {
				open.s += string(e)
			}
		case xml.EndElement:
			if e.Name.Local == "text" && open != nil {
				texts = append(texts, *open)
				open = nil
			}
		}
	}
}

// A sweep whose short category's TTFT p95 crossed 250 ms: the TTFT chart
// plots that figure (not only the overall p95) with the limit drawn, the
// load axis ends near the top rate, and the knee's label stands over its
// band, clear of the capacity's.
func TestTTFTChartShowsTheJudgedThreshold(t *testing.T) {
	loads := []float64{2, 4, 8, 16, 32, 64}
	overall := []float64{22, 38, 75, 190, 750, 1690}
	short := []float64{20, 30, 90, 210, 680, 1500}
	sw := &Sweep{SchemaVersion: SchemaVersion, Kind: KindRate, Steps: steps(loads, overall)}
	for i := range sw.Steps {
		held := short[i] < 250
		sw.Steps[i].Passed = held
		sw.Steps[i].TTFT = []Judged{{Rule: "[category:short] ttft.p95 < 250ms", Scope: "category:short", Statistic: "p95", ValueMs: short[i], LimitMs: 250, Passed: held}}
	}
	sw.Knee = FindKnee(sw.Steps, DefaultKneeRule())
	if sw.Knee == nil || sw.Knee.Below != 4 || sw.Knee.Load != 8 {
		t.Fatalf("knee %+v, want between 4 and 8", sw.Knee)
	}
	sw.Search = &SearchResult{Capacity: 16, FailedAt: 32, Resolution: 0.1}
	ch := sw.Charts()[0]
	if ch.Name != "ttft-p95" {
		t.Fatalf("first chart %q", ch.Name)
	}
	texts, classed := parseSVG(t, ch.SVG)

	// The judged figure, one point a step, and the limit line.
	pts := classed["judged-point"]
	if len(pts) != len(loads) {
		t.Fatalf("%d points of the judged figure, want %d", len(pts), len(loads))
	}
	for i, p := range pts {
		if p["data-ms"] != strconv.FormatFloat(short[i], 'f', -1, 64) {
			t.Errorf("point %d: %s ms, want the short category's %g", i, p["data-ms"], short[i])
		}
	}
	if l := classed["limit"]; len(l) != 1 || l[0]["data-limit-ms"] != "250" {
		t.Errorf("limit line %v, want one at 250 ms", l)
	}

	// The load axis: its last tick just past 64, not 100.
	var last float64
	var ticks []svgText
	for _, tx := range texts {
		if tx.class == "xtick" {
			v, _ := strconv.ParseFloat(tx.s, 64)
			last = v
			ticks = append(ticks, tx)
		}
	}
	if last < 64 || last > 64*1.25 {
		t.Errorf("load axis ends at %g for a top load of 64", last)
	}
	for i := 1; i < len(ticks); i++ {
		_, _, a1, _ := ticks[i-1].box()
		b0, _, _, _ := ticks[i].box()
		if b0 < a1+4 {
			t.Errorf("ticks %q and %q touch", ticks[i-1].s, ticks[i].s)
		}
	}

	// The knee's label over its band (centred between the x of 4 and of
	// 8), clear of the capacity's label and inside the chart.
	var knee, capacity *svgText
	for i := range texts {
		switch texts[i].class {
		case "knee-label":
			knee = &texts[i]
		case "capacity-label":
			capacity = &texts[i]
		}
	}
	if knee == nil || capacity == nil {
		t.Fatalf("knee label %v, capacity label %v", knee, capacity)
	}
	x4, x8 := 56+4.0/70*(480-56-16), 56+8.0/70*(480-56-16)
	k0, ky0, k1, ky1 := knee.box()
	if mid := (k0 + k1) / 2; mid < x4-1 || mid > x8+1 {
		t.Errorf("knee label centred at %.1f, its band is %.1f–%.1f", mid, x4, x8)
	}
	c0, cy0, c1, cy1 := capacity.box()
	if k0 < c1 && c0 < k1 && ky0 < cy1 && cy0 < ky1 {
		t.Errorf("knee label %.0f–%.0f overlaps capacity label %.0f–%.0f", k0, k1, c0, c1)
	}
	for _, tx := range texts {
		if tx.class != "knee-label" {
			if x0, y0, x1, y1 := tx.box(); x0 < k1 && k0 < x1 && y0 < ky1 && ky0 < y1 {
				t.Errorf("knee label %.0f,%.0f–%.0f,%.0f overlaps %q", k0, ky0, k1, ky1, tx.s)
			}
		}
		if x0, _, x1, _ := tx.box(); x0 < 0 || x1 > 480 {
			t.Errorf("%q runs off the chart (%.0f–%.0f)", tx.s, x0, x1)
		}
	}
}

// A sweep file from before Step.TTFT gets its steps' judged TTFT
// thresholds from their run files.
func TestFillTTFTFromRunFiles(t *testing.T) {
	dir := t.TempDir()
	run := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Verdicts: []runfile.Verdict{
		{Rule: "ttft.p95 < 250ms", Scope: "category:short", Metric: "ttft", Statistic: "p95", Operator: "<", Value: 300, Limit: 250, Unit: "ms"},
		{Rule: "gap.max <= 120ms", Scope: "overall", Metric: "gap", Statistic: "max", Operator: "<=", Value: 20, Limit: 120, Unit: "ms", Passed: true},
	}}
	if err := os.MkdirAll(filepath.Join(dir, "01-rate-4"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run.Write(filepath.Join(dir, "01-rate-4", "run.json")); err != nil {
		t.Fatal(err)
	}
	sw := &Sweep{Steps: []Step{{Load: 4, Dir: "01-rate-4"}, {Load: 8, Dir: "02-rate-8"}}}
	if err := sw.FillTTFT(dir); err == nil {
		t.Error("the missing run file of 02-rate-8 went unsaid")
	}
	got := sw.Steps[0].TTFT
	if len(got) != 1 || got[0].Rule != "[category:short] ttft.p95 < 250ms" || got[0].ValueMs != 300 || got[0].Passed {
		t.Errorf("step 4: %+v", got)
	}
	if sw.Steps[1].TTFT != nil {
		t.Errorf("step 8 has no run file, got %+v", sw.Steps[1].TTFT)
	}
}

// Without a capacity the knee's label stands above the plot, under the
// TTFT chart's key and clear of it.
func TestKneeLabelClearOfTheKey(t *testing.T) {
	sw := &Sweep{SchemaVersion: SchemaVersion, Kind: KindRate, Steps: steps([]float64{2, 4, 8, 16}, []float64{20, 30, 90, 400})}
	for i := range sw.Steps {
		sw.Steps[i].TTFT = []Judged{{Rule: "[category:short] ttft.p95 < 250ms", ValueMs: sw.Steps[i].TTFTP95Ms, LimitMs: 250, Passed: i < 3}}
	}
	sw.Knee = FindKnee(sw.Steps, DefaultKneeRule())
	texts, _ := parseSVG(t, sw.Charts()[0].SVG)
	var knee *svgText
	for i := range texts {
		if texts[i].class == "knee-label" {
			knee = &texts[i]
		}
	}
	if knee == nil {
		t.Fatal("no knee label")
	}
	k0, ky0, k1, ky1 := knee.box()
	for _, tx := range texts {
		if tx.class == "knee-label" {
			continue
		}
		if x0, y0, x1, y1 := tx.box(); x0 < k1 && k0 < x1 && y0 < ky1 && ky0 < y1 {
			t.Errorf("knee label %.0f,%.0f–%.0f,%.0f overlaps %q", k0, ky0, k1, ky1, tx.s)
		}
	}
}
