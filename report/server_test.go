package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// scrapedRun is conversationRun (requests over 0–2.7 s) with a scrape
// that began 0.5 s before its first request: llama-server's deferred
// requests 0, 1, 3, 2 and KV usage 0.1, 0.2, 0.6, 0.5 a second apart,
// its output token rate, a named series, and a sample after the run.
func scrapedRun() *runfile.Run {
	r := conversationRun()
	pts := func(v ...float64) []runfile.ScrapePoint {
		var out []runfile.ScrapePoint
		for i, x := range v {
			out = append(out, runfile.ScrapePoint{MS: float64(i) * 1000, V: x})
		}
		return out
	}
	r.Scrape = &runfile.Scrape{URL: "http://h/metrics", StartedAt: r.Requests[0].StartedAt.Add(-500 * time.Millisecond), IntervalMS: 1000, Samples: 5,
		Series: []runfile.ScrapeSeries{
			{Name: "llamacpp:requests_processing", Role: runfile.RoleRunning, Kind: runfile.KindGauge, Points: pts(0, 1, 1, 1, 0)},
			{Name: "llamacpp:requests_deferred", Role: runfile.RoleQueue, Kind: runfile.KindGauge, Points: pts(0, 1, 3, 2, 9)},
			{Name: "llamacpp:kv_cache_usage_ratio", Role: runfile.RoleKV, Kind: runfile.KindGauge, Points: pts(0.1, 0.2, 0.6, 0.5, 0)},
			{Name: "llamacpp:tokens_predicted_total", Role: runfile.RoleTokens, Kind: runfile.KindRate, Points: pts(0, 40, 80, 60)[1:]},
			{Name: "llamacpp:n_decode_total", Kind: runfile.KindRate, Points: pts(5, 6, 7)},
		}}
	return r
}

// TestLoadChartDrawsTheServerGauges: the scrape's series are drawn on
// the load chart's time axis, only their points within the run (the
// deferred requests 1, 3, 2 at 0.5, 1.5 and 2.5 s; the 9 after the run
// is left out), KV as a percentage, with each request's TTFT at its
// start; a run without a scrape has none of it.
func TestLoadChartDrawsTheServerGauges(t *testing.T) {
	r := scrapedRun()
	root := parseSVG(t, LoadChart(r, Options{}).SVG)
	got := map[string]svgNode{}
	for _, g := range root.find("gauge") {
		got[g.attr("data-series")] = g
	}
	for _, want := range []struct{ series, role, max, points string }{
		{"llamacpp:requests_deferred", "queue", "3", "3"},
		{"llamacpp:requests_processing", "running", "1", "3"},
		{"llamacpp:kv_cache_usage_ratio", "kv", "60", "3"},
		{"llamacpp:tokens_predicted_total", "tokens", "80", "3"},
		{"llamacpp:n_decode_total", "", "7", "2"},
	} {
		g, ok := got[want.series]
		if !ok {
			t.Errorf("no line of %s; lines: %v", want.series, got)
			continue
		}
		if g.attr("data-role") != want.role || g.attr("data-max") != want.max || g.attr("data-points") != want.points {
			t.Errorf("%s: role %q max %s points %s; want %q, %s, %s", want.series, g.attr("data-role"), g.attr("data-max"), g.attr("data-points"), want.role, want.max, want.points)
		}
	}
	if n := len(root.find("ttft")); n != len(r.Requests) {
		t.Errorf("%d TTFT points, want one per request (%d)", n, len(r.Requests))
	}
	svg := string(LoadChart(r, Options{}).SVG)
	for _, want := range []string{"server: requests", "server: KV cache usage, %", "server: llamacpp:n_decode_total, per s", "beside the server"} {
		if !strings.Contains(svg, want) {
			t.Errorf("load chart lacks %q", want)
		}
	}
	plain := parseSVG(t, LoadChart(conversationRun(), Options{}).SVG)
	if n, m := len(plain.find("gauge")), len(plain.find("ttft")); n+m != 0 {
		t.Errorf("a run without a scrape has %d gauge lines and %d TTFT points", n, m)
	}
}

// TestTimelineSaysTheServerAtItsStart: an offender's timeline says the
// queue and KV usage the server reported last before the request began.
func TestTimelineSaysTheServerAtItsStart(t *testing.T) {
	r := scrapedRun()
	tls := Timelines(r, Options{})
	if len(tls) == 0 {
		t.Fatal("no timeline")
	}
	for _, tl := range tls {
		root := parseSVG(t, tl.SVG)
		var q *runfile.Request
		for i := range r.Requests {
			if r.Requests[i].RequestID == root.attr("data-request-id") {
				q = &r.Requests[i]
			}
		}
		// The samples are at -0.5, 0.5, 1.5, 2.5 s of the first start.
		startS := q.StartedAt.Sub(r.Requests[0].StartedAt).Seconds()
		queue, kv := []string{"0", "1", "3", "2"}, []string{"0.1", "0.2", "0.6", "0.5"}
		k := int(startS + 0.5)
		if root.attr("data-server-queue") != queue[k] || root.attr("data-server-kv") != kv[k] {
			t.Errorf("request at %.2f s: queue %s, KV %s; want %s and %s", startS, root.attr("data-server-queue"), root.attr("data-server-kv"), queue[k], kv[k])
		}
		if !strings.Contains(string(tl.SVG), "server at its start: "+queue[k]+" queued") {
			t.Errorf("timeline does not say the queue at its start:\n%s", tl.SVG)
		}
	}
	for _, tl := range Timelines(conversationRun(), Options{}) {
		if strings.Contains(string(tl.SVG), "server at its start") {
			t.Error("a run without a scrape speaks of the server's gauges")
		}
	}
	var page bytes.Buffer
	if err := HTML(&page, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `class="gauge"`) || !strings.Contains(page.String(), "server at its start") {
		t.Error("the HTML report lacks the server's gauges")
	}
}

// TestGaugeLineBreaksAtAHole: where samples failed (points more than two
// and a half intervals apart) the line breaks instead of bridging them.
func TestGaugeLineBreaksAtAHole(t *testing.T) {
	r := scrapedRun()
	s := &r.Scrape.Series[1] // requests_deferred: 1, 3, 2 at 0.5, 1.5, 2.5 s of the run
	s.Points = []runfile.ScrapePoint{{MS: 1000, V: 1}, {MS: 1400, V: 2}, {MS: 3000, V: 3}}
	r.Scrape.IntervalMS = 500 // a hole of 1.6 s between the second and third
	for _, g := range parseSVG(t, LoadChart(r, Options{}).SVG).find("gauge") {
		if g.attr("data-series") != s.Name {
			continue
		}
		for _, n := range g.Nodes {
			if n.XMLName.Local == "path" {
				if d := n.attr("d"); strings.Count(d, "M") != 2 {
					t.Errorf("path %q: want two pieces, broken at the hole", d)
				}
				return
			}
		}
	}
	t.Fatal("no line of requests_deferred")
}

// TestReportsSayTheGaugePeaks: the text and HTML reports say what the
// server's gauges peaked at; a run without a scrape says nothing of it.
func TestReportsSayTheGaugePeaks(t *testing.T) {
	want := "server's own gauges (http://h/metrics, 5 samples): queued peak 9, running peak 1, KV cache peak 60%"
	var txt, page bytes.Buffer
	if err := Text(&txt, scrapedRun(), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, scrapedRun(), Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, txt.String())
	}
	if !strings.Contains(page.String(), `id="server-gauges"`) || !strings.Contains(page.String(), "queued peak 9, running peak 1, KV cache peak 60%") {
		t.Error("HTML report lacks the gauges' peaks")
	}
	txt.Reset()
	Text(&txt, conversationRun(), Options{})
	if strings.Contains(txt.String(), "server's own gauges") {
		t.Error("a run without a scrape speaks of gauges")
	}
}
