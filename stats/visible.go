package stats

// Display describes how a client shows streamed text: a token becomes
// visible at the first display frame after it arrives, and the client may
// hold arrivals for a render batching window before painting them.
type Display struct {
	// FrameHz is the display refresh rate (default DefaultDisplay's).
	FrameHz float64
	// BatchNS is the client's render batching window in nanoseconds: a
	// token is painted at the first frame at or after arrival + BatchNS.
	BatchNS int64
}

// DefaultDisplay is the display model of a run that names none: a 60 Hz
// display with a 16 ms render batching window. It is the one place these
// figures are written; the run file (runner), the visible metrics
// (measure.Display) and the methodology (report) take them from here.
var DefaultDisplay = Display{FrameHz: 60, BatchNS: 16_000_000}

// BatchMS is the render batching window in milliseconds.
func (d Display) BatchMS() float64 { return Millis(d.BatchNS) }

// Visible returns the time (ns from the request start) at which each token
// arriving at times becomes visible: the first frame boundary at or after
// arrival + BatchNS, frames being counted from the request start. The result
// is non-decreasing when times is.
func (d Display) Visible(times []int64) []int64 {
	hz := d.FrameHz
	if hz <= 0 {
		hz = DefaultDisplay.FrameHz
	}
	frame := int64(1e9 / hz)
	out := make([]int64, len(times))
	for i, t := range times {
		v := t + d.BatchNS
		k := (v + frame - 1) / frame
		if v <= 0 {
			k = 0
		}
		out[i] = k * frame
	}
	return out
}

// VisibleGaps returns the gaps between successive frames that showed new
// text: the pauses a reader sees. Tokens painted in the same frame add no
// gap.
func (d Display) VisibleGaps(times []int64) []int64 {
	v := d.Visible(times)
	var gaps []int64
	for i := 1; i < len(v); i++ {
		if v[i] != v[i-1] {
			gaps = append(gaps, v[i]-v[i-1])
		}
	}
	return gaps
}
