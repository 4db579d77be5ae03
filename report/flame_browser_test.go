package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/tokenpulse/tokenpulse/internal/browser"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

// TestFlameGraphInChromium opens a report whose run has a CPU profile and
// checks through the DOM that the flame graph is drawn within the page,
// its frames as wide as their share, each with its full name on hover.
func TestFlameGraphInChromium(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	r := reporttest.StallRun()
	if _, err := reporttest.WriteProfile(dir, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteAll(dir, r, Options{Formats: []string{"html"}}); err != nil {
		t.Fatal(err)
	}
	tab, cancel, err := browser.Start(context.Background(), 1100)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if err := browser.Open(tab, filepath.Join(dir, HTMLFile)); err != nil {
		t.Fatal(err)
	}
	type frame struct {
		Title string  `json:"title"`
		Width float64 `json:"width"`
	}
	type info struct {
		Frames    []frame `json:"frames"`
		SVGWidth  float64 `json:"svgWidth"`
		MainWidth float64 `json:"mainWidth"`
	}
	got, err := chromedp.Run(tab, chromedp.Evaluate[info](`(() => {
		const svg = document.querySelector("#flame-graph + figure svg.flame");
		if (!svg) return {frames: [], svgWidth: 0, mainWidth: 0};
		const frames = [...svg.querySelectorAll("g.frame")].map(g => ({
			title: g.querySelector("title").textContent,
			width: g.querySelector("rect").getBoundingClientRect().width,
		}));
		return {frames, svgWidth: svg.getBoundingClientRect().width, mainWidth: document.querySelector("main").getBoundingClientRect().width};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	// all, forward, matVec: the server's samples only, each the whole.
	if len(got.Frames) != 3 {
		t.Fatalf("frames %+v: want all, forward and matVec", got.Frames)
	}
	if got.SVGWidth == 0 || got.SVGWidth > got.MainWidth {
		t.Errorf("flame graph %.0f px wide in a page of %.0f px", got.SVGWidth, got.MainWidth)
	}
	for _, f := range got.Frames[1:] {
		if !strings.Contains(f.Title, "100.0%") || f.Width < 0.9*got.SVGWidth {
			t.Errorf("frame %q drawn %.0f px of %.0f: want the whole width", f.Title, f.Width, got.SVGWidth)
		}
	}
	if !strings.HasPrefix(got.Frames[2].Title, reporttest.ProfileServerFunc) {
		t.Errorf("the top frame's tooltip %q lacks the full name %s", got.Frames[2].Title, reporttest.ProfileServerFunc)
	}
}
