package runfile

import "github.com/tokenpulse/tokenpulse/stats"

// Paint is what a browser run (bench --browser) measured of one request
// in the page: when each token was inserted into the DOM and painted, and
// the long frames and tasks while it streamed. Times are ns from the
// request's t_start, which for a browser run is the click that asked
// (the input event's timeStamp); the request's TokenTimesNS are then the
// arrivals of its content events at the page's fetch reader, in the same
// clock, so each token has arrival, insertion and paint side by side.
type Paint struct {
	// Render is the page's render strategy: "per-token", "frame",
	// "debounce16", or "page" for a team's own page (--page).
	Render string `json:"render"`
	// CPUThrottle is Chromium's CPU slowdown factor (1: none).
	CPUThrottle float64 `json:"cpu_throttle"`
	// Trusted is true when the click came through Chromium's input
	// pipeline (event.isTrusted), as every measured click should.
	Trusted bool `json:"trusted"`
	// InsertNS and PaintNS are, parallel to TokenTimesNS, each content
	// event's DOM insertion and paint; -1 when it was not inserted (the
	// answer was replaced first) or no paint was seen.
	InsertNS []int64 `json:"insert_ns"`
	PaintNS  []int64 `json:"paint_ns"`
	// PaintSources says, parallel to PaintNS, where each paint time came
	// from: "element" (Element Timing's renderTime of the token's span)
	// or "frame" (the end of the first frame after insertion).
	PaintSources []string `json:"paint_sources,omitempty"`
	// Dropped counts content events the page received but did not paint
	// because the answer was no longer the current one.
	Dropped int `json:"dropped,omitempty"`
	// LongFrames and LongTasks are the long animation frames (over 50 ms)
	// and long tasks that overlapped the request, from its click to its
	// last paint.
	LongFrames []LongFrame `json:"long_frames,omitempty"`
	LongTasks  []LongFrame `json:"long_tasks,omitempty"`
}

// LongFrame is one long animation frame or long task: its start (ns from
// the request's t_start, negative when it began before the click), its
// duration and, for a frame, its blocking duration.
type LongFrame struct {
	StartNS    int64 `json:"start_ns"`
	DurationNS int64 `json:"duration_ns"`
	BlockingNS int64 `json:"blocking_ns,omitempty"`
}

// Browser is how a browser run was made and what its instruments cost.
type Browser struct {
	// Chromium is the browser's product and version.
	Chromium string `json:"chromium"`
	// Renders are the render strategies run, in order; CPUThrottle the
	// CPU slowdown factor.
	Renders     []string `json:"renders"`
	CPUThrottle float64  `json:"cpu_throttle"`
	// Page is the page measured: "embedded" (tokenpulse's chat page,
	// served by the relay), or a team's own page's URL.
	Page string `json:"page"`
	// Input, Send and Output are the selectors of a team's own page.
	Input  string `json:"input,omitempty"`
	Send   string `json:"send,omitempty"`
	Output string `json:"output,omitempty"`
	// Relay is the local origin that served the page and relayed /v1/* to
	// the target; RelayHoldMs is its added time: each request's forward
	// and each answer chunk's read-to-flush, in ms.
	Relay       string             `json:"relay,omitempty"`
	RelayHoldMs stats.Distribution `json:"relay_hold_ms"`
	// ClockOffsetNS maps the page's clock to the Unix clock: a page time p
	// (ns) is Unix ns ClockOffsetNS + p; ClockUncertaintyNS is half the
	// round trip it was measured in.
	ClockOffsetNS      int64 `json:"clock_offset_ns"`
	ClockUncertaintyNS int64 `json:"clock_uncertainty_ns"`
	// ElementTiming and LongAnimationFrames say whether the browser
	// supported each (without Element Timing every paint is the frame
	// after insertion).
	ElementTiming       bool `json:"element_timing"`
	LongAnimationFrames bool `json:"long_animation_frames"`
}
