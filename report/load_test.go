package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// conversationRun is a run of two conversations of three turns each,
// whose TTFT grows with the turn (100, 150, 210 ms and 110, 170, 230 ms)
// as the prompt does (20, 60, 110 tokens), and a single prompt, in an
// open loop.
func conversationRun() *runfile.Run {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	r := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Tool: runfile.Tool{Name: "tokenpulse", Version: "v0"},
		Config: runfile.Config{Suite: "conversations", Arrival: "poisson", Rate: 2, Concurrency: 4}}
	add := func(conv string, k int, startMS, ttft int64, prompt int, lag int64) {
		sched := startMS*1e6 - lag
		r.Requests = append(r.Requests, runfile.Request{
			Index: len(r.Requests), RequestID: conv + strconv.Itoa(k), Category: "chat", PromptID: "p-" + conv,
			ConversationID: conv, Turn: k, PromptTokens: prompt, StartedAt: t0.Add(time.Duration(startMS) * time.Millisecond),
			ScheduledNS: &sched, ScheduleLagNS: lag,
			TTFTNS: ttft * 1e6, E2ENS: (ttft + 40) * 1e6, OutputTokens: 3, ContentEvents: 3,
			TokenTimesNS: []int64{ttft * 1e6, (ttft + 20) * 1e6, (ttft + 40) * 1e6}})
	}
	add("a", 1, 0, 100, 20, 0)
	add("b", 1, 50, 110, 22, 2e6)
	add("a", 2, 1140, 150, 60, 0)
	add("b", 2, 1200, 170, 64, 1e6)
	add("a", 3, 2330, 210, 110, 0)
	add("b", 3, 2410, 230, 114, 3e6)
	sched := int64(2500e6)
	r.Requests = append(r.Requests, runfile.Request{Index: len(r.Requests), RequestID: "s", Category: "short", PromptID: "s",
		PromptTokens: 8, StartedAt: t0.Add(2500 * time.Millisecond), ScheduledNS: &sched,
		TTFTNS: 50e6, E2ENS: 90e6, OutputTokens: 2, ContentEvents: 2, TokenTimesNS: []int64{50e6, 90e6}})
	measure.Summarize(r)
	return r
}

func TestTurnChartShowsTTFTGrowth(t *testing.T) {
	r := conversationRun()
	c, ok := TurnChart(r, Options{})
	if !ok {
		t.Fatal("no turn chart for a run with conversations")
	}
	golden(t, "charts/turns.svg", c.SVG)
	root := parseSVG(t, c.SVG)
	for _, class := range []string{"p50", "p95"} {
		pts := root.find(class)
		if len(pts) != 3 {
			t.Fatalf("%d %s points, want one per turn (3)", len(pts), class)
		}
		for i, p := range pts {
			g := r.Summary.Turns[i]
			want := g.TTFTMs.P50
			if class == "p95" {
				want = g.TTFTMs.P95
			}
			if p.attr("data-turn") != strconv.Itoa(i+1) || p.attr("data-ms") != strconv.FormatFloat(want, 'f', -1, 64) {
				t.Errorf("%s point %d: turn %s at %s ms, want turn %d at %v", class, i, p.attr("data-turn"), p.attr("data-ms"), i+1, want)
			}
		}
	}
	// TTFT p50 105, 160, 220 ms: drawn higher (smaller y) turn after turn.
	ys := []float64{}
	for _, p := range root.find("p50") {
		for _, n := range p.Nodes {
			if n.XMLName.Local == "circle" {
				y, _ := strconv.ParseFloat(n.attr("cy"), 64)
				ys = append(ys, y)
			}
		}
	}
	if len(ys) != 3 || !(ys[0] > ys[1] && ys[1] > ys[2]) {
		t.Errorf("p50 points at y %v, want rising turn after turn", ys)
	}
	if got := len(root.find("prompt-tokens")); got != 3 {
		t.Errorf("%d prompt-token bars, want 3", got)
	}
	if _, ok := TurnChart(reporttest.StallRun(), Options{}); ok {
		t.Error("a turn chart for a run without conversations")
	}
}

func TestLoadChartCountsRequests(t *testing.T) {
	r := conversationRun()
	root := parseSVG(t, LoadChart(r, Options{}).SVG)
	if got, want := root.attr("data-peak"), "3"; got != want { // a3, b3 and the single prompt at 2.5 s
		t.Errorf("data-peak %s, want %s", got, want)
	}
	ok := 0
	for _, b := range root.find("rate") {
		n, _ := strconv.Atoi(b.attr("data-ok"))
		ok += n
	}
	if ok != 7 {
		t.Errorf("the rate bars hold %d completed requests, want 7", ok)
	}
	lags := root.find("lag")
	if len(lags) != 7 {
		t.Fatalf("%d lag points, want one per scheduled request (7)", len(lags))
	}
	if got := lags[5].attr("data-lag-ms"); got != "3" {
		t.Errorf("lag of b's third turn %s ms, want 3", got)
	}
	// A closed loop has no lag panel.
	if n := len(parseSVG(t, LoadChart(reporttest.StallRun(), Options{}).SVG).find("lag")); n != 0 {
		t.Errorf("%d lag points in a closed loop", n)
	}
}

func TestReportsShowTurnsOnlyWithConversations(t *testing.T) {
	r := conversationRun()
	var txt, page bytes.Buffer
	if err := Text(&txt, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, r, Options{}); err != nil {
		t.Fatal(err)
	}
	// turn, reqs, errors, ttft p50, p95, max, prompt tokens, e2e p50.
	var lines []string
	for _, l := range strings.Split(txt.String(), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	all := strings.Join(lines, "\n")
	for _, row := range []string{"\n1 2 0 105.0 109.5 110.0 21 145.0\n", "\n3 2 0 220.0 229.0 230.0 112 260.0\n"} {
		if !strings.Contains(all, row) {
			t.Errorf("text report lacks the row %q:\n%s", row, txt.String())
		}
	}
	for _, want := range []string{`id="turns"`, `class="chart turns"`, "<td>105.0</td>", `id="load"`, "<th>lag p99</th>"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	txt.Reset()
	page.Reset()
	Text(&txt, reporttest.StallRun(), Options{})
	HTML(&page, reporttest.StallRun(), Options{})
	if strings.Contains(txt.String(), "TTFT by turn") || strings.Contains(page.String(), `id="turns"`) {
		t.Error("a run without conversations shows TTFT by turn")
	}
	if strings.Contains(page.String(), "<th>lag p99</th>") {
		t.Error("a closed loop shows schedule columns")
	}
}

// One request in flight at a time, each sent 0.2 ms after the last one
// ended (a closed loop of -c 1): the in-flight line stays at 1 across the
// run instead of dropping to 0 between each end and the next start (a
// barcode).
func TestInFlightIsNotABarcode(t *testing.T) {
	r := reporttest.StallRun()
	var at time.Time
	for i := range r.Requests {
		q := &r.Requests[i]
		if at.IsZero() {
			at = q.StartedAt
		}
		q.StartedAt = at
		at = measure.End(q).Add(200 * time.Microsecond)
	}
	root := parseSVG(t, LoadChart(r, Options{}).SVG)
	lines := root.find("inflight")
	if len(lines) != 1 {
		t.Fatalf("%d in-flight lines", len(lines))
	}
	d := lines[0].attr("d")
	if n := strings.Count(d, "V"); n > 4 {
		t.Errorf("the in-flight line of one request at a time steps %d times: %s", n, d)
	}
}
