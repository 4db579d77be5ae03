package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// browserRun is a browser run of two render strategies, one request each:
// per-token painting with a 300 ms stall, frame painting without.
func browserRun(withSession bool) *runfile.Run {
	ms := int64(time.Millisecond)
	run := &runfile.Run{SchemaVersion: 1, Config: runfile.Config{FrameHz: 60, RenderBatchMS: 16}}
	if withSession {
		run.Config.Browser = &runfile.Browser{Chromium: "Chrome/1", Renders: []string{"per-token", "frame"}, CPUThrottle: 4, Page: "embedded"}
	}
	start := time.Unix(1000, 0)
	for i, render := range []string{"per-token", "frame"} {
		times := []int64{100 * ms, 120 * ms, 140 * ms}
		paints := []int64{110 * ms, 130 * ms, 450 * ms}
		if render == "frame" {
			paints = []int64{110 * ms, 130 * ms, 150 * ms}
		}
		run.Requests = append(run.Requests, runfile.Request{
			Index: i, PromptID: "p" + render, Status: 200, StartedAt: start.Add(time.Duration(i) * time.Second),
			TTFTNS: times[0], E2ENS: times[2], TokenTimesNS: times,
			ServerTimesNS: []int64{start.UnixNano() + 90*ms, start.UnixNano() + 110*ms, start.UnixNano() + 130*ms},
			Paint:         &runfile.Paint{Render: render, CPUThrottle: 4, InsertNS: times, PaintNS: paints},
		})
	}
	measure.Summarize(run)
	return run
}

func TestBrowserSection(t *testing.T) {
	for _, session := range []bool{true, false} {
		run := browserRun(session)
		v := newBrowserView(run, Options{})
		if v == nil || len(v.Rows) != 2 || v.Rows[0][0] != "per-token" || v.Rows[1][0] != "frame" {
			t.Fatalf("session %v: browser view %+v", session, v)
		}
		// Per-token's paint gap max is its 320 ms stall; frame's 20 ms.
		if got := v.Rows[0][7]; got != "320.0" {
			t.Errorf("per-token paint gap max %s, want 320.0", got)
		}
		if got := v.Rows[1][7]; got != "20.0" {
			t.Errorf("frame paint gap max %s, want 20.0", got)
		}
		// No threshold crossed: each strategy's request with the longest
		// paint gap is drawn, with its three layers.
		if len(v.Layers) != 2 || !strings.Contains(string(v.Layers[0].SVG), `class="stall"`) || strings.Contains(string(v.Layers[1].SVG), `class="stall"`) {
			t.Errorf("session %v: want two layered timelines, a stall marked on per-token's only", session)
		}
		var text bytes.Buffer
		if err := Text(&text, run, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "what the eye sees") {
			t.Errorf("session %v: the text report has no browser section", session)
		}
	}
	var html bytes.Buffer
	if err := HTML(&html, browserRun(true), Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="browser"`, "Measured visible metrics", "CPU throttle 4×"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	// A run measured without a browser has no such section.
	run := browserRun(true)
	run.Config.Browser = nil
	for i := range run.Requests {
		run.Requests[i].Paint = nil
	}
	measure.Summarize(run)
	if v := newBrowserView(run, Options{}); v != nil {
		t.Errorf("a run without paints has a browser view")
	}
}
