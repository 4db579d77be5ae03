package report

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/tokenpulse/tokenpulse/internal/browser"
)

// layoutJS measures, in the page as Chromium lays it out, what a reader
// would see as broken: the waterfall's labels against its plot, the gap
// histogram's labels against each other and the bars, the timelines'
// headings against their charts, and how many lines each table cell
// and each request id takes.
const layoutJS = `(() => {
	const bbox = e => { const b = e.getBBox(); return {text: e.textContent, x: b.x, y: b.y, w: b.width, h: b.height}; };
	const lineCount = (node, from, to) => {
		const r = document.createRange();
		if (from === undefined) { r.selectNodeContents(node); } else { r.setStart(node, from); r.setEnd(node, to); }
		return [...r.getClientRects()].map(c => c.top);
	};
	const lines = tops => {
		tops.sort((a, b) => a - b);
		let n = 0, last = -1e9;
		for (const t of tops) { if (t - last > 8) { n++; last = t; } }
		return n;
	};
	const cellLines = td => {
		const tops = [];
		const w = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
		for (let n; (n = w.nextNode());) { if (n.textContent.trim()) tops.push(...lineCount(n)); }
		return lines(tops);
	};
	const tableAfter = id => {
		let e = document.getElementById(id);
		while (e && !e.matches(".scroll")) e = e.nextElementSibling;
		return e ? e.querySelector("table") : null;
	};

	const wf = document.querySelector("svg.waterfall");
	const rows = [...wf.querySelectorAll("g.request")].map(g => {
		const b = bbox(g.querySelector("text"));
		b.plot = Math.min(...[...g.querySelectorAll("rect")].map(r => r.x.baseVal.value));
		return b;
	});

	const gs = document.querySelector("svg.gaps");
	const labels = [...gs.querySelectorAll('text[font-size="10"]')].map(bbox);
	const bars = [...gs.querySelectorAll("g.bin rect")].map(bbox);

	const headings = [...document.querySelectorAll("svg.timeline")].map(s => {
		const b = bbox(s.querySelector("text"));
		b.width = s.viewBox.baseVal.width;
		return b;
	});

	const cells = [];
	for (const [id, cols] of [["verdicts", [0, 1, 2, 3, 4, 5]], ["experience", [0, 1, 2]], ["categories", null], ["cold", null]]) {
		const t = tableAfter(id);
		if (!t) continue;
		for (const tr of t.tBodies[0].rows) {
			[...tr.cells].forEach((td, i) => {
				if (cols === null || cols.includes(i)) cells.push({table: id, col: i, text: td.textContent, lines: cellLines(td)});
			});
		}
	}

	const ids = [];
	for (const root of [document.getElementById("verdict"), tableAfter("verdicts")]) {
		const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
		for (let n; (n = w.nextNode());) {
			for (const m of n.textContent.matchAll(/tp-[A-Z0-9]+/g)) {
				ids.push({text: m[0], lines: lines(lineCount(n, m.index, m.index + m[0].length))});
			}
		}
	}
	return {rows, labels, bars, headings, cells, ids};
})()`

type bboxJS struct {
	Text       string
	X, Y, W, H float64
	Plot       float64 // waterfall rows: the x where the bars start
	Width      float64 // timeline headings: the chart's width
}

func (b bboxJS) box() box { return box{b.X, b.Y, b.X + b.W, b.Y + b.H} }

type layoutJSResult struct {
	Rows     []bboxJS
	Labels   []bboxJS
	Bars     []bboxJS
	Headings []bboxJS
	Cells    []struct {
		Table, Text string
		Col, Lines  int
	}
	IDs []struct {
		Text  string
		Lines int
	}
}

// TestHTMLLayoutInChromium renders a run with the long prompt and request
// ids of a real suite and a gap histogram with many neighbouring bins in
// a 900 px wide Chromium, and checks through the layout that nothing a
// new user saw clipped, overlapping or wrapped is so: every waterfall
// label lies inside the chart and left of the bars, no two histogram
// labels (counts and marker tags) overlap and no count covers a bar,
// timeline headings fit their chart, value cells take one line, and no
// request id is split across lines.
func TestHTMLLayoutInChromium(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	if err := WriteAll(dir, longRun(), Options{Formats: []string{"html"}}); err != nil {
		t.Fatal(err)
	}
	tab, cancel, err := browser.Start(context.Background(), 900)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if err := browser.Open(tab, filepath.Join(dir, HTMLFile)); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(tab, chromedp.Evaluate[layoutJSResult](layoutJS))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("waterfall labels", func(t *testing.T) {
		if len(got.Rows) == 0 {
			t.Fatal("waterfall has no rows")
		}
		for _, r := range got.Rows {
			if r.X < 0 || r.X+r.W > r.Plot-2 {
				t.Errorf("label %q spans x %.1f to %.1f, want inside 0 to %.1f (the bars start at %.1f)", r.Text, r.X, r.X+r.W, r.Plot-2, r.Plot)
			}
		}
	})
	t.Run("histogram labels", func(t *testing.T) {
		if len(got.Labels) < 3 {
			t.Fatalf("histogram shows %d labels, want the marker tags and some counts", len(got.Labels))
		}
		// getBBox spans the font's whole ascent and descent, more than
		// the glyphs: allow a pixel of it to touch.
		shrink := func(b box) box { return box{b.X0, b.Y0 + 0.5, b.X1, b.Y1 - 0.5} }
		for i, a := range got.Labels {
			for _, b := range got.Labels[i+1:] {
				if shrink(a.box()).overlaps(shrink(b.box())) {
					t.Errorf("labels %q at (%.1f, %.1f) and %q at (%.1f, %.1f) overlap", a.Text, a.X, a.Y, b.Text, b.X, b.Y)
				}
			}
			for _, bar := range got.Bars {
				if shrink(a.box()).overlaps(bar.box()) {
					t.Errorf("label %q at (%.1f, %.1f)–(%.1f, %.1f) covers the bar at (%.1f, %.1f)–(%.1f, %.1f)",
						a.Text, a.X, a.Y, a.X+a.W, a.Y+a.H, bar.X, bar.Y, bar.X+bar.W, bar.Y+bar.H)
				}
			}
		}
	})
	t.Run("timeline headings", func(t *testing.T) {
		if len(got.Headings) == 0 {
			t.Fatal("page has no timeline")
		}
		for _, h := range got.Headings {
			if h.X < 0 || h.X+h.W > h.Width-4 {
				t.Errorf("heading %q spans x %.1f to %.1f, want inside the chart's %.0f px", h.Text, h.X, h.X+h.W, h.Width)
			}
		}
	})
	t.Run("table values on one line", func(t *testing.T) {
		if len(got.Cells) < 20 {
			t.Fatalf("found %d table cells, want the verdicts, experience, category and cold tables", len(got.Cells))
		}
		for _, c := range got.Cells {
			if c.Lines != 1 {
				t.Errorf("%s table, column %d: %q takes %d lines, want 1", c.Table, c.Col, c.Text, c.Lines)
			}
		}
	})
	t.Run("request ids whole", func(t *testing.T) {
		if len(got.IDs) < 2 {
			t.Fatalf("found %d request ids in the banner and the verdicts, want the offenders'", len(got.IDs))
		}
		for _, id := range got.IDs {
			if id.Lines != 1 {
				t.Errorf("request id %s is split over %d lines", id.Text, id.Lines)
			}
		}
	})

	png, err := browser.Capture(tab)
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.ArtifactDir(), "report-long-ids.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
}
