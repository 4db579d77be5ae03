package report

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestChartsGolden(t *testing.T) {
	for _, c := range Charts(reporttest.StallRun(), Options{}) {
		t.Run(c.Name, func(t *testing.T) {
			golden(t, "charts/"+c.Name+".svg", c.SVG)
		})
	}
}

// svgNode is a generic XML element for walking a chart.
type svgNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []svgNode  `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n svgNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// find returns every element below n (n included) with the class.
func (n svgNode) find(class string) []svgNode {
	var out []svgNode
	if strings.Contains(" "+n.attr("class")+" ", " "+class+" ") {
		out = append(out, n)
	}
	for _, c := range n.Nodes {
		out = append(out, c.find(class)...)
	}
	return out
}

func parseSVG(t *testing.T, b []byte) svgNode {
	t.Helper()
	var n svgNode
	if err := xml.Unmarshal(b, &n); err != nil {
		t.Fatalf("chart is not well-formed XML: %v", err)
	}
	return n
}

func TestTimelineMarksTheStall(t *testing.T) {
	tls := Timelines(reporttest.StallRun(), Options{})
	if got, want := len(tls), 2; got != want {
		t.Fatalf("got %d timelines, want %d (the stalled request and the cut one)", got, want)
	}
	root := parseSVG(t, tls[0].SVG)
	if got, want := root.attr("data-request-id"), reporttest.StallRequestID; got != want {
		t.Errorf("first timeline is of %q, want %q", got, want)
	}
	stalls := root.find("stall")
	if got, want := len(stalls), 1; got != want {
		t.Fatalf("got %d stall markers, want %d", got, want)
	}
	if got, want := stalls[0].attr("data-after-token"), "10"; got != want {
		t.Errorf("stall after token %s, want %s", got, want)
	}
	if got := stalls[0].attr("data-gap-ms"); !strings.HasPrefix(got, "29") && !strings.HasPrefix(got, "30") {
		t.Errorf("stall gap %s ms, want about 300", got)
	}
	if !strings.Contains(string(tls[0].SVG), ">stall "+stalls[0].attr("data-gap-ms")+" ms<") {
		t.Errorf("stall has no visible label")
	}
	if got := len(parseSVG(t, tls[1].SVG).find("stall")); got != 0 {
		t.Errorf("steady cut request has %d stall markers, want 0", got)
	}
}

func TestStallRules(t *testing.T) {
	// Gaps: 20 20 50 20 130 ms.
	q := &runfile.Request{TokenTimesNS: []int64{0, 20e6, 40e6, 90e6, 110e6, 240e6}}
	tests := []struct {
		name    string
		limitMS float64
		o       Options
		want    []int // After of each stall
	}{
		{"median rule only", 0, Options{}, []int{5}},
		{"limit lower than 3x median", 40, Options{}, []int{3, 5}},
		{"factor 2", 0, Options{StallFactor: 2}, []int{3, 5}},
		{"median rule off, no limit", 0, Options{StallFactor: -1}, nil},
		{"StallMS overrides the limit", 40, Options{StallMS: 200, StallFactor: -1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := findStalls(q, tt.limitMS, tt.o)
			var after []int
			for _, s := range got {
				after = append(after, s.After)
			}
			if len(after) != len(tt.want) {
				t.Fatalf("stalls after tokens %v, want %v", after, tt.want)
			}
			for i := range after {
				if after[i] != tt.want[i] {
					t.Errorf("stalls after tokens %v, want %v", after, tt.want)
				}
			}
		})
	}
}

func TestTimelinesWithoutCrossedThreshold(t *testing.T) {
	run := reporttest.StallRun()
	for i := range run.Verdicts {
		run.Verdicts[i].Passed = true
	}
	tls := Timelines(run, Options{})
	if got, want := len(tls), 1; got != want {
		t.Fatalf("got %d timelines, want %d (the worst stall)", got, want)
	}
	if got, want := parseSVG(t, tls[0].SVG).attr("data-request-id"), reporttest.StallRequestID; got != want {
		t.Errorf("reference timeline is of %q, want the request with the longest gap %q", got, want)
	}
}

func TestGapHistogram(t *testing.T) {
	run := reporttest.StallRun()
	root := parseSVG(t, GapHistogram(run, Options{}).SVG)
	bins := root.find("bin")
	total := 0
	for _, b := range bins {
		var n int
		for _, c := range b.attr("data-count") {
			n = n*10 + int(c-'0')
		}
		total += n
	}
	if got, want := total, run.Summary.Overall.GapMs.Count; got != want {
		t.Errorf("histogram holds %d gaps, want %d (every warm gap)", got, want)
	}
	last := bins[len(bins)-1]
	if got, want := last.attr("data-count"), "1"; got != want {
		t.Errorf("last bin holds %s gaps, want %s (the stall)", got, want)
	}
	red := false
	for _, n := range last.Nodes {
		if n.XMLName.Local == "rect" && n.attr("fill") == colStall {
			red = true
		}
	}
	if !red {
		t.Errorf("the stall's bin is not red")
	}
}

func TestWaterfallRows(t *testing.T) {
	run := reporttest.StallRun()
	tests := []struct {
		name string
		o    Options
		want int
	}{
		{"every measured request", Options{}, 12},
		// 11 warm requests: p95, p99 and max are all the 11th by nearest rank.
		{"cold and percentiles", Options{MaxWaterfall: 5}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := waterfallRows(run, tt.o)
			if got := len(rows); got != tt.want {
				var labels []string
				for _, r := range rows {
					labels = append(labels, r.Label)
				}
				t.Errorf("got %d rows %q, want %d", got, labels, tt.want)
			}
			for _, r := range rows {
				if r.Q.Warmup {
					t.Errorf("waterfall shows warm-up request %d", r.Q.Index)
				}
			}
		})
	}
	root := parseSVG(t, Waterfall(run, Options{}).SVG)
	if got, want := len(root.find("request")), 12; got != want {
		t.Errorf("waterfall draws %d requests, want %d", got, want)
	}
}

// TestWaterfallRanksOnlyWhatTheSummaryRanks: the rows named p50 … max
// are the requests at those ranks of the summary's TTFT sample, which
// holds no failed request: a cut stream with the latest first token is
// not the "max".
func TestWaterfallRanksOnlyWhatTheSummaryRanks(t *testing.T) {
	run := reporttest.StallRun()
	cut := &run.Requests[len(run.Requests)-1]
	if cut.OK() {
		t.Fatal("the fixture's last request is not the cut stream")
	}
	for i := range cut.TokenTimesNS {
		cut.TokenTimesNS[i] += 500e6
	}
	cut.TTFTNS, cut.E2ENS = cut.TokenTimesNS[0], cut.E2ENS+500e6
	for _, row := range waterfallRows(run, Options{MaxWaterfall: 5}) {
		if row.Q == cut {
			t.Errorf("row %q is the failed request", row.Label)
		}
	}
}

// TestTimelineClimbsByTheCounts: a timeline's staircase counts tokens as
// TPOT does: an event a tokenizer counted 0 tokens adds none, and events
// that batch the server's usage total carry its average.
func TestTimelineClimbsByTheCounts(t *testing.T) {
	q := runfile.Request{Index: 0, RequestID: "r", PromptID: "p", Status: 200, TokenTimesNS: []int64{10e6, 20e6, 30e6},
		ContentEvents: 3, E2ENS: 31e6, TTFTNS: 10e6}
	for _, tc := range []struct {
		name   string
		set    func(*runfile.Request)
		tokens string
	}{
		{"a tokenizer's zero", func(q *runfile.Request) {
			q.TokenSource, q.TokenCounts, q.OutputTokens = runfile.TokensTokenizer, []int{1, 0, 2}, 3
		}, "3 tokens"},
		{"the usage's total over batched events", func(q *runfile.Request) {
			q.TokenSource, q.OutputTokens = runfile.TokensUsage, 12
		}, "12 tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := q
			tc.set(&r)
			c := timeline(timelineFor{Req: &r, Worst: true}, Options{})
			if !strings.Contains(string(c.SVG), ">"+tc.tokens+"<") {
				t.Errorf("the staircase does not end at %q:\n%s", tc.tokens, c.SVG)
			}
		})
	}
}
