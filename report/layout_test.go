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
		{"tokens read together", withZeroGaps(reporttest.StallRun())},
		{"gaps just above the floor", func() *runfile.Run {
			// Gaps of 0 and of 10 µs: the log axis starts at 0.01 ms,
			// beside the underflow bar's "<0.01".
			r := withZeroGaps(reporttest.StallRun())
			for i := range r.Requests {
				ts := r.Requests[i].TokenTimesNS
				for k := 7; k < len(ts); k += 7 {
					ts[k] = ts[k-1] + 10_000
				}
			}
			return r
		}()},
		{"a bin of thousands", func() *runfile.Run {
			// One request of 3000 tokens 0.1 ms apart: a count axis to
			// 10,000, where 0 and 1 used to sit 14 px apart.
			r := reporttest.StallRun()
			k := 0
			for r.Requests[k].Cold || r.Requests[k].Warmup || !r.Requests[k].OK() {
				k++
			}
			q := &r.Requests[k]
			q.TokenTimesNS, q.TokenCounts = nil, nil
			for k := range 3000 {
				q.TokenTimesNS = append(q.TokenTimesNS, q.TTFTNS+int64(k)*100_000)
			}
			return r
		}()},
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
			// No marker line runs through a label.
			for _, m := range root.find("marker") {
				x := num(t, m, "x1")
				line := box{x - 0.5, num(t, m, "y1"), x + 0.5, num(t, m, "y2")}
				for i, l := range labels {
					if l.overlaps(line) && !contains(tags, texts[i]) {
						t.Errorf("the marker line at x=%.1f cuts the label %q %v", x, texts[i], l)
					}
				}
			}
			// The time axis's labels stand apart ("<0.01" and "0.01" met).
			xt := root.find("xtick")
			for i := range xt {
				for j := i + 1; j < len(xt); j++ {
					a := textBox(num(t, xt[i], "x"), num(t, xt[i], "y"), xt[i].Text, fontSize, "middle")
					b := textBox(num(t, xt[j], "x"), num(t, xt[j], "y"), xt[j].Text, fontSize, "middle")
					if a.overlaps(b) {
						t.Errorf("time ticks %q and %q overlap", xt[i].Text, xt[j].Text)
					}
				}
			}
			// The count axis's "0" and "1" stand apart.
			var ticks []box
			for _, n := range root.Nodes {
				// the count axis's labels: end-anchored at x 50, left of the plot
				if n.XMLName.Local == "text" && n.attr("x") == "50" && n.attr("text-anchor") == "end" {
					ticks = append(ticks, textBox(num(t, n, "x"), num(t, n, "y"), n.Text, fontSize, n.attr("text-anchor")))
				}
			}
			if len(ticks) < 2 {
				t.Fatalf("%d count ticks", len(ticks))
			}
			for i := range ticks {
				for j := i + 1; j < len(ticks); j++ {
					if a, b := ticks[i], ticks[j]; a.Y0 < b.Y1+2 && b.Y0 < a.Y1+2 {
						t.Errorf("count ticks %v and %v are squeezed together", a, b)
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

// The timeline's heading is not cut short: a long prompt id and a long
// request id (tokenpulse's are 29 characters) each have a line, and the
// two lines hold the prompt, the request's number, category and id
// whole. A prompt id too long even for a line of its own is cut and
// carries the whole in a <title>.
func TestTimelineHeadingFits(t *testing.T) {
	for _, tt := range []struct {
		name string
		run  *runfile.Run
		cut  bool
	}{
		{"long ids", func() *runfile.Run {
			r := renamed(func(s string) string { return s + "-pneumococcal-conjugate" })
			long := func(id string) string { return "tp-3ISR4KOC7O4L4M2TKW6VIK" + strings.TrimPrefix(id, "req-") }
			for i := range r.Requests {
				r.Requests[i].RequestID = long(r.Requests[i].RequestID)
			}
			for i := range r.Verdicts {
				for k := range r.Verdicts[i].Offenders {
					o := &r.Verdicts[i].Offenders[k]
					o.RequestID = long(o.RequestID)
				}
			}
			return r
		}(), false},
		{"a prompt id of 150 characters", renamed(func(s string) string { return s + strings.Repeat("-pneumococcal", 11) }), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tls := Timelines(tt.run, Options{})
			if len(tls) == 0 {
				t.Fatal("no timeline drawn")
			}
			for _, tl := range tls {
				root := parseSVG(t, tl.SVG)
				var lines, titles []string
				for _, n := range root.Nodes {
					if s, ti, ok := labelled(n); ok {
						lines, titles = append(lines, s), append(titles, ti)
					}
					if len(lines) == 2 {
						break
					}
				}
				if got, room := textWidth(lines[0], fontSize*boldWidth), 760-2*chartPad; got > room {
					t.Errorf("heading %q is %.0f px wide, want at most %.0f", lines[0], got, room)
				}
				both := strings.Join(lines, " ")
				q := tl.Name
				cut := strings.Contains(both, "…")
				if cut != tt.cut {
					t.Errorf("heading %q cut %v, want %v", both, cut, tt.cut)
				}
				if cut && !strings.Contains(titles[0], "pneumococcal-pneumococcal-pneumococcal-pneumococcal-pneumococcal-pneumococcal-pneumococcal-pneumococcal") {
					t.Errorf("cut heading %q carries title %q, want the whole prompt id", lines[0], titles[0])
				}
				if !cut {
					id := root.attr("data-request-id")
					if !strings.Contains(lines[1], id) || !strings.Contains(lines[0], root.attr("data-prompt-id")) {
						t.Errorf("%s: heading %q lacks the prompt id or the request id %s", q, both, id)
					}
				}
			}
		})
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

// contains reports whether the tags name s.
func contains(tags []svgNode, s string) bool {
	for _, n := range tags {
		if n.Text == s {
			return true
		}
	}
	return false
}

// withZeroGaps makes every fifth token of each request arrive with the
// one before it: gaps of 0 ms, under the histogram's log axis.
func withZeroGaps(r *runfile.Run) *runfile.Run {
	for i := range r.Requests {
		ts := r.Requests[i].TokenTimesNS
		for k := 5; k < len(ts); k += 5 {
			ts[k] = ts[k-1]
		}
	}
	return r
}

// Gaps under the log axis's floor (tokens read together) get a bar of
// their own, labelled, not a silent place in the first bin.
func TestGapHistogramLabelsTheUnderflow(t *testing.T) {
	run := withZeroGaps(reporttest.StallRun())
	zeros := 0
	for _, g := range warmGaps(run) {
		if g < 0.01 {
			zeros++
		}
	}
	if zeros == 0 {
		t.Fatal("the fixture has no gap under 0.01 ms")
	}
	root := parseSVG(t, GapHistogram(run, Options{}).SVG)
	under := root.find("underflow")
	var bar, label *svgNode
	for i := range under {
		switch under[i].XMLName.Local {
		case "g":
			bar = &under[i]
		case "text":
			label = &under[i]
		}
	}
	if bar == nil || bar.attr("data-count") != strconv.Itoa(zeros) {
		t.Fatalf("underflow bar %v, want one of %d gaps", bar, zeros)
	}
	if label == nil || label.Text != "<0.01" {
		t.Fatalf("underflow label %v, want \"<0.01\"", label)
	}
	// The first log bin holds none of them.
	bins := root.find("bin")
	if len(bins) < 2 {
		t.Fatal("no bin beside the underflow")
	}
	total := 0
	for _, b := range bins {
		total += atoi(b.attr("data-count"))
	}
	if total != len(warmGaps(run)) {
		t.Errorf("bars hold %d gaps, the run has %d", total, len(warmGaps(run)))
	}
}
