package report

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestTextWidth(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want float64 // pixels at 10 px
	}{
		{"empty", "", 0},
		{"digits", "320.9", 4*6.4 + 3.2},
		{"CJK is a full em each", "肺炎球菌疫苗", 60},
		{"fullwidth punctuation", "，。", 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := textWidth(tt.s, 10); got < tt.want-1e-9 || got > tt.want+1e-9 {
				t.Errorf("textWidth(%q, 10) = %.2f, want %.2f", tt.s, got, tt.want)
			}
		})
	}
	// Widths add up, so a label's width is that of its parts.
	a, b := "#24 complex-pneumococcal-vaccines", " (cold)"
	if got, want := textWidth(a+b, 11), textWidth(a, 11)+textWidth(b, 11); got < want-1e-9 || got > want+1e-9 {
		t.Errorf("textWidth of a joined label %.2f, want the sum of its parts %.2f", got, want)
	}
}

func TestFitText(t *testing.T) {
	tests := []struct {
		name string
		s    string
		maxW float64
		cut  bool
	}{
		{"fits", "#3 short-01", 200, false},
		{"too long", "#24 complex-pneumococcal-vaccines-in-adults-over-sixty-five (cold)", 150, true},
		{"CJK too long", "肺炎球菌疫苗接种顺序比较", 60, true},
		{"exactly fits", "abc", textWidth("abc", 11), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := fitText(tt.s, tt.maxW, 11)
			if cut != tt.cut {
				t.Fatalf("fitText(%q, %.0f) cut = %v, want %v", tt.s, tt.maxW, cut, tt.cut)
			}
			if w := textWidth(got, 11); w > tt.maxW+1e-9 {
				t.Errorf("fitText(%q, %.0f) = %q, %.1f px wide, want at most %.0f", tt.s, tt.maxW, got, w, tt.maxW)
			}
			if !cut && got != tt.s {
				t.Errorf("fitText(%q) = %q, want it unchanged", tt.s, got)
			}
			if cut && (!strings.HasSuffix(got, "…") || !strings.HasPrefix(tt.s, strings.TrimSuffix(got, "…"))) {
				t.Errorf("fitText(%q) = %q, want a prefix of it ended by an ellipsis", tt.s, got)
			}
		})
	}
}

// renamed returns StallRun with every prompt id replaced by name(old).
func renamed(name func(string) string) *runfile.Run {
	r := reporttest.StallRun()
	for i := range r.Requests {
		r.Requests[i].PromptID = name(r.Requests[i].PromptID)
	}
	return r
}

// labelled returns the text of n and the <title> of a cut text: the text
// and its hover title when n is a <g class="cut">.
func labelled(n svgNode) (text, title string, ok bool) {
	switch {
	case n.XMLName.Local == "text":
		return n.Text, "", true
	case n.XMLName.Local == "g" && n.attr("class") == "cut":
		for _, c := range n.Nodes {
			switch c.XMLName.Local {
			case "title":
				title = c.Text
			case "text":
				text = c.Text
			}
		}
		return text, title, true
	}
	return "", "", false
}

func TestWaterfallLabelsFit(t *testing.T) {
	tests := []struct {
		name string
		run  *runfile.Run
		cut  bool // whether the longest labels must be cut
	}{
		{"short ids", reporttest.StallRun(), false},
		{"zh-medical ids", longRun(), false},
		{"CJK ids", renamed(func(s string) string { return s + "-肺炎球菌疫苗" }), false},
		{"ids past the label column", renamed(func(s string) string {
			return s + "-pneumococcal-conjugate-and-polysaccharide-vaccines-in-adults"
		}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := parseSVG(t, Waterfall(tt.run, Options{}).SVG)
			rows := root.find("request")
			if len(rows) == 0 {
				t.Fatal("waterfall has no rows")
			}
			widest, plotLeft, cuts := 0.0, 0.0, 0
			for _, row := range rows {
				var label, title, plot string
				for _, n := range row.Nodes {
					if s, ti, ok := labelled(n); ok && label == "" {
						label, title = s, ti
					}
					if n.XMLName.Local == "rect" && plot == "" {
						plot = n.attr("x")
					}
				}
				left, err := strconv.ParseFloat(plot, 64)
				if err != nil {
					t.Fatalf("row %s has no bar: %v", row.attr("data-request-id"), err)
				}
				if got, room := textWidth(label, fontSize), left-labelGap-chartPad; got > room+1e-9 {
					t.Errorf("label %q is %.1f px wide, want at most the %.1f px left of the bars", label, got, room)
				}
				if title != "" {
					cuts++
					if !strings.HasPrefix(title, strings.TrimSuffix(label, "…")) || !strings.HasSuffix(label, "…") {
						t.Errorf("cut label %q has title %q, want the whole label", label, title)
					}
				}
				widest = max(widest, textWidth(label, fontSize))
				plotLeft = left
			}
			// The label column is no wider than the labels need.
			if need := max(chartPad+widest+labelGap, 90); plotLeft > need+1 && !tt.cut {
				t.Errorf("bars start at %.1f, want at most %.1f (the widest label needs no more)", plotLeft, need+1)
			}
			if got := cuts > 0; got != tt.cut {
				t.Errorf("%d labels cut, want cut = %v", cuts, tt.cut)
			}
		})
	}
}

func TestGapHistogramLabelsDoNotCollide(t *testing.T) {
	tests := []struct {
		name string
		run  *runfile.Run
	}{
		{"stall run", reporttest.StallRun()},
		{"many neighbouring bins", longRun()},
		{"no limit", func() *runfile.Run { r := longRun(); r.Verdicts = nil; return r }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := parseSVG(t, GapHistogram(tt.run, Options{}).SVG)
			var bars, labels []box
			var texts []string
			for _, b := range root.find("bin") {
				for _, n := range b.Nodes {
					if n.XMLName.Local == "rect" {
						x, y, w, h := num(t, n, "x"), num(t, n, "y"), num(t, n, "width"), num(t, n, "height")
						bars = append(bars, box{x, y, x + w, y + h})
					}
				}
			}
			counts := root.find("count")
			tags := root.find("tag")
			for _, n := range append(counts, tags...) {
				labels = append(labels, textBox(num(t, n, "x"), num(t, n, "y"), n.Text, smallSize, n.attr("text-anchor")))
				texts = append(texts, n.Text)
			}
			for i := range labels {
				for j := i + 1; j < len(labels); j++ {
					if labels[i].overlaps(labels[j]) {
						t.Errorf("labels %q %v and %q %v overlap", texts[i], labels[i], texts[j], labels[j])
					}
				}
				for _, b := range bars {
					if labels[i].overlaps(b) {
						t.Errorf("label %q %v covers the bar %v", texts[i], labels[i], b)
					}
				}
			}
			if got, want := len(tags), len(root.find("marker")); got != want {
				t.Errorf("%d marker tags for %d marker lines, want each line named", got, want)
			}
			if len(counts) == 0 {
				t.Fatal("no bin is labelled with its count")
			}
			// The tallest bin and the last (the longest gaps) keep their
			// counts.
			bins := root.find("bin")
			tallest := bins[0]
			for _, b := range bins {
				if n, m := atoi(b.attr("data-count")), atoi(tallest.attr("data-count")); n > m {
					tallest = b
				}
			}
			for _, want := range []string{tallest.attr("data-count"), bins[len(bins)-1].attr("data-count")} {
				found := false
				for _, c := range counts {
					found = found || c.Text == want
				}
				if !found {
					t.Errorf("no count label %s, want the tallest and the last bin labelled", want)
				}
			}
		})
	}
}

func TestTimelineHeadingFits(t *testing.T) {
	run := renamed(func(s string) string { return s + "-pneumococcal-conjugate-and-polysaccharide" })
	for _, tl := range Timelines(run, Options{}) {
		root := parseSVG(t, tl.SVG)
		var heading, title string
		for _, n := range root.Nodes {
			if s, ti, ok := labelled(n); ok {
				heading, title = s, ti
				break
			}
		}
		if got, room := textWidth(heading, fontSize*boldWidth), 760-2*chartPad; got > room {
			t.Errorf("heading %q is %.0f px wide, want at most %.0f", heading, got, room)
		}
		if title != tl.Title {
			t.Errorf("cut heading %q carries title %q, want the whole %q", heading, title, tl.Title)
		}
	}
}

func num(t *testing.T, n svgNode, attr string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(n.attr(attr), 64)
	if err != nil {
		t.Fatalf("<%s> %s=%q: %v", n.XMLName.Local, attr, n.attr(attr), err)
	}
	return f
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
