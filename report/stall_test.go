package report

import (
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// shaped returns a warm, successful request of one token per event at
// the given times (ns from the start).
func shaped(prompt string, times []int64) *runfile.Request {
	q := &runfile.Request{Index: 27, PromptID: prompt, Category: "short", RequestID: "req-0027", TokenTimesNS: times}
	for range times {
		q.TokenCounts = append(q.TokenCounts, 1)
	}
	q.OutputTokens = len(times)
	q.TTFTNS = times[0]
	q.E2ENS = times[len(times)-1] + 1_000_000
	return q
}

// readBatched is the shape of request #27 of a `bench --suite zh-medical
// -n 60 -c 4` run against `tokenpulse serve`: 5 ms per token, read in
// bursts of 10 or 11 events (57 of 63 gaps are 0 ns), a 60.8 ms gap
// before a read of one event.
func readBatched() *runfile.Request {
	var times []int64
	t := int64(80_000_000)
	for r, n := range []int{10, 11, 10, 1, 11, 11, 10} {
		switch {
		case r == 3:
			t += 60_800_000
		case r > 0:
			t += int64(n) * 5_000_000
		}
		for range n {
			times = append(times, t)
		}
	}
	return shaped("short-sore-throat", times)
}

// steady returns n events every stepMS ms after a 50 ms TTFT, with a gap
// of stallMS before each event whose index is in stalls.
func steady(prompt string, n int, stepMS, stallMS float64, stalls ...int) *runfile.Request {
	var times []int64
	t := 50e6
	for i := range n {
		if i > 0 {
			t += stepMS * 1e6
			for _, s := range stalls {
				if s == i {
					t += (stallMS - stepMS) * 1e6
				}
			}
		}
		times = append(times, int64(t))
	}
	return shaped(prompt, times)
}

func TestTimelineMarksAStallAmongZeroGaps(t *testing.T) {
	root := parseSVG(t, timeline(timelineFor{Req: readBatched(), Worst: true}, Options{}).SVG)
	stalls := root.find("stall")
	if len(stalls) != 1 || stalls[0].attr("data-gap-ms") != "60.8" || stalls[0].attr("data-after-token") != "31" {
		var got []string
		for _, s := range stalls {
			got = append(got, s.attr("data-after-token")+":"+s.attr("data-gap-ms"))
		}
		t.Fatalf("stalls %v, want the 60.8 ms gap before event 31 alone", got)
	}
	for _, n := range root.Nodes {
		if n.XMLName.Local == "text" && strings.Contains(n.Text, "no stall rule") {
			t.Errorf("the timeline says %q", n.Text)
		}
	}
}

func TestStallLabelsDoNotOverlap(t *testing.T) {
	tests := []struct {
		name string
		q    *runfile.Request
	}{
		{"stalls on neighbouring tokens", steady("short-sore-throat", 12, 5, 70, 3, 4, 5, 6, 7)},
		{"stalls every ten tokens of a long answer", steady("long-answer", 240, 5, 60, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)},
		{"a stall at either end", steady("ends", 30, 10, 90, 1, 2, 28, 29)},
		{"read in bursts", readBatched()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := parseSVG(t, timeline(timelineFor{Req: tt.q, Worst: true}, Options{}).SVG)
			stalls := root.find("stall")
			if len(stalls) == 0 {
				t.Fatal("no stall marked")
			}
			var labels []box
			var texts []string
			for _, s := range stalls {
				for _, n := range s.Nodes {
					if n.XMLName.Local == "text" {
						labels = append(labels, textBox(num(t, n, "x"), num(t, n, "y"), n.Text, fontSize*boldWidth, n.attr("text-anchor")))
						texts = append(texts, n.Text)
					}
				}
			}
			if len(labels) == 0 {
				t.Fatal("no stall is labelled")
			}
			for i := range labels {
				if l := labels[i]; l.X0 < 0 || l.X1 > 760 || l.Y0 < 0 || l.Y1 > 316 {
					t.Errorf("label %q %v leaves the chart", texts[i], l)
				}
				for j := i + 1; j < len(labels); j++ {
					if labels[i].overlaps(labels[j]) {
						t.Errorf("labels %q %v and %q %v overlap", texts[i], labels[i], texts[j], labels[j])
					}
				}
			}
		})
	}
}
