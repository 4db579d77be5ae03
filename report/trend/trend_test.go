package trend

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

func mkRun(day int, gapMax float64, crossed bool, regressions int) *runfile.Run {
	r := &runfile.Run{
		StartedAt: time.Date(2026, 11, day, 2, 0, 0, 0, time.UTC),
		Target:    runfile.Target{URL: "http://h:8080", Model: "m"},
		Device:    runfile.Device{Hostname: "h", Label: "pixel-8"},
	}
	o := &r.Summary.Overall
	o.Requests, o.Errors = 10, 1
	o.TTFTMs = stats.Distribution{Count: 9, P95: 80}
	o.GapMs = stats.Distribution{Count: 90, P95: 20, Max: gapMax}
	r.Verdicts = []runfile.Verdict{
		{Rule: "gap.max <= 120ms", Scope: "overall", Limit: 120, Unit: "ms", Passed: !crossed, Value: gapMax},
		{Rule: "[category:long] ttft.p95 < 50ms", Scope: "category:long", Limit: 50, Unit: "ms", Passed: true, Value: 40},
	}
	if regressions > 0 {
		// ttft.p95 regressed (overall and in category long); gap.p95
		// was judged within its band.
		r.Comparison = &runfile.Comparison{Regressions: regressions, Changes: []runfile.Change{
			{Scope: "overall", Metric: "ttft.p95", Status: runfile.ChangeRegressed},
			{Scope: "category:long", Metric: "ttft.p95", Status: runfile.ChangeRegressed},
			{Scope: "overall", Metric: "gap.p95", Status: runfile.ChangeWithin},
		}}
	}
	return r
}

// categoryCrossed is mkRun's run with its category rule crossed: the
// run failed on a figure whose overall value the chart shows.
func categoryCrossed(day int) *runfile.Run {
	r := mkRun(day, 50, false, 0)
	r.Verdicts[1].Passed, r.Verdicts[1].Value = false, 80
	return r
}

// TestFromRun reads the charted figures, the overall thresholds (only),
// crossed ones and regressions; a figure the run lacks is absent, not 0.
func TestFromRun(t *testing.T) {
	r := FromRun(7, "https://x/report.html", mkRun(1, 150, true, 2))
	if r.Values["gap.max"] != 150 || r.Values["errors.rate"] != 10 || r.Values["ttft.p95"] != 80 {
		t.Errorf("values %v", r.Values)
	}
	if _, ok := r.Values["tpot.p95"]; ok {
		t.Error("tpot.p95 has a value though the run has no token interval")
	}
	if _, ok := r.Values["goodput.share"]; ok {
		t.Error("goodput has a value though the run has none")
	}
	if r.Limits["gap.max"] != 120 || len(r.Limits) != 1 || fmt.Sprint(r.Crossed) != "map[gap.max:[overall 120 ms]]" {
		t.Errorf("limits %v crossed %v: want gap.max 120 crossed overall, the category rule's limit not drawn", r.Limits, r.Crossed)
	}
	if r.Regressions != 2 || fmt.Sprint(r.Regressed) != "map[ttft.p95:[overall category:long]]" || r.Device != "pixel-8" || r.Target != "http://h:8080" {
		t.Errorf("run %+v", r)
	}
	c := FromRun(8, "", categoryCrossed(2))
	if fmt.Sprint(c.Crossed) != "map[ttft.p95:[category:long 50 ms]]" {
		t.Errorf("a run failed in a category: crossed %v, want ttft.p95 in category:long", c.Crossed)
	}
}

// TestPageMarksAndLinks: the page has one section per target × model ×
// device, a chart per figure, the threshold drawn, the crossed and the
// regressed run marked, and the published run's point linked; nothing is
// loaded from elsewhere.
func TestPageMarksAndLinks(t *testing.T) {
	runs := []Run{
		FromRun(1, "", mkRun(1, 50, false, 0)),
		FromRun(2, "https://reports.example/2/report.html", mkRun(2, 150, true, 0)),
		FromRun(3, "", mkRun(3, 60, false, 3)),
	}
	other := mkRun(2, 40, false, 0)
	other.Device.Label = "ci-x86"
	runs = append(runs, FromRun(4, "", other), FromRun(5, "", categoryCrossed(4)))
	var b bytes.Buffer
	if err := HTML(&b, runs, "postgres://ci@db/h"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"device pixel-8", "device ci-x86", "Longest stall (gap max)", "Goodput", "TPOT p95",
		`<a href="https://reports.example/2/report.html"`,
		`class="point crossed"`, `class="regressed"`, `<g class="threshold">`, "1 run, ",
		"run 2, ", "threshold crossed: overall 120 ms", "regressed against its base in overall, category:long",
		"threshold crossed: category:long 50 ms",
		"noise band of the " + strconv.Itoa(bandRuns) + " runs before", "grouped by target, model and device, whatever their settings",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<figure>"); n != 2*len(Figures) {
		t.Errorf("%d charts, want %d", n, 2*len(Figures))
	}
	if n := strings.Count(page, `class="point crossed"`); n != 2 {
		t.Errorf("%d crossed points, want 2 (run 2's gap max, run 5's TTFT p95 in its category)", n)
	}
	if n := strings.Count(page, `class="regressed"`); n != 1 {
		t.Errorf("%d ringed points, want 1 (run 3's TTFT p95, the one figure that regressed)", n)
	}
	for _, bad := range []string{"<script", "src=\"http", "@import", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("page loads something: %q", bad)
		}
	}
}

// TestChartDrawsTheNoiseBand: a point with bandRuns earlier runs of the
// figure gets the band they give; a series too short for one has none.
func TestChartDrawsTheNoiseBand(t *testing.T) {
	var runs []Run
	for day := 1; day <= bandRuns; day++ {
		runs = append(runs, FromRun(int64(day), "", mkRun(day, 40+float64(day), false, 0)))
	}
	f := Figure{Key: "gap.max", Title: "Longest stall", Unit: "ms"}
	short := Group(runs)[0]
	if bytes.Contains(Chart(short, f), []byte(`class="band"`)) {
		t.Errorf("a band drawn over %d runs, which have no %d before any of them", len(runs), bandRuns)
	}
	for day := bandRuns + 1; day <= bandRuns+3; day++ {
		runs = append(runs, FromRun(int64(day), "", mkRun(day, 40+float64(day), false, 0)))
	}
	if !bytes.Contains(Chart(Group(runs)[0], f), []byte(`class="band"`)) {
		t.Errorf("no band drawn over %d runs", len(runs))
	}
}
