package report

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/tokenpulse/tokenpulse/internal/browser"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

// TestHTMLInChromium opens the HTML report of a run with a 300 ms stall in
// headless Chromium, checks through the DOM that the offending prompt's
// timeline is drawn with a visible stall marker, and saves a screenshot
// (kept with go test -artifacts).
func TestHTMLInChromium(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	if err := WriteAll(dir, reporttest.StallRun(), Options{Formats: []string{"html"}}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, HTMLFile)
	tab, cancel, err := browser.Start(context.Background(), 1100)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if err := browser.Open(tab, page); err != nil {
		t.Fatal(err)
	}

	sel := `svg.timeline[data-request-id="` + reporttest.StallRequestID + `"]`
	type stallInfo struct {
		Timelines int     `json:"timelines"`
		Stalls    int     `json:"stalls"`
		GapMS     string  `json:"gapMs"`
		Width     float64 `json:"width"`
		Height    float64 `json:"height"`
		Fill      string  `json:"fill"`
		Label     string  `json:"label"`
		Banner    string  `json:"banner"`
		Scripts   int     `json:"scripts"`
	}
	got, err := chromedp.Run(tab, chromedp.Evaluate[stallInfo](`(() => {
		const svg = document.querySelector(`+strconv.Quote(sel)+`);
		const stalls = svg ? svg.querySelectorAll("g.stall") : [];
		const s = stalls[0];
		const band = s && s.querySelector("rect");
		const box = band ? band.getBoundingClientRect() : {width: 0, height: 0};
		const label = s && s.querySelector("text");
		return {
			timelines: document.querySelectorAll("svg.timeline").length,
			stalls: stalls.length,
			gapMs: s ? s.dataset.gapMs : "",
			width: box.width, height: box.height,
			fill: band ? getComputedStyle(band).fill : "",
			label: label ? label.textContent : "",
			banner: document.querySelector("#verdict strong").textContent,
			scripts: document.scripts.length,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Timelines < 1 {
		t.Fatalf("page has no timeline chart")
	}
	if got.Stalls != 1 {
		t.Fatalf("timeline of %s has %d stall markers, want 1", reporttest.StallRequestID, got.Stalls)
	}
	gap, err := strconv.ParseFloat(got.GapMS, 64)
	if err != nil || gap < 280 || gap > 320 {
		t.Errorf("stall marker says %q ms, want about %d", got.GapMS, reporttest.StallMS)
	}
	if got.Width < 20 || got.Height < 20 {
		t.Errorf("stall band is drawn %.0f×%.0f px, want a visible band", got.Width, got.Height)
	}
	if got.Fill != "rgb(214, 39, 40)" {
		t.Errorf("stall band fill %q, want red", got.Fill)
	}
	if got.Label != "stall "+got.GapMS+" ms" {
		t.Errorf("stall label %q, want %q", got.Label, "stall "+got.GapMS+" ms")
	}
	if got.Banner != "FAIL: 2 of 4 thresholds crossed" {
		t.Errorf("banner %q", got.Banner)
	}
	if got.Scripts != 0 {
		t.Errorf("page runs %d scripts, want none", got.Scripts)
	}

	png, err := browser.Capture(tab)
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.ArtifactDir(), "report.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
}
