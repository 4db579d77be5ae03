package report

// Options tune the reports. The zero value is ready to use.
type Options struct {
	// Color turns on ANSI colours in Text.
	Color bool
	// StallFactor marks a gap in a timeline as a stall when it is more
	// than StallFactor times that request's pace per token of the read
	// that ends it (measure.StallRule; default 3; < 0 turns this rule
	// off).
	StallFactor float64
	// StallMS marks a gap as a stall when it is longer than StallMS
	// milliseconds. When 0, the limit of a crossed gap threshold that named
	// the request is used.
	StallMS float64
	// MaxTimelines caps the number of offender timelines drawn (default 12).
	MaxTimelines int
	// MaxWaterfall is the number of requests up to which the waterfall
	// shows every request; above it shows the cold requests and the warm
	// ones at the TTFT median, p95, p99 and max (default 24).
	MaxWaterfall int
	// RunDir is the run's directory, where the files the run file names
	// (its CPU profile) are read from; WriteAll uses its own directory
	// when RunDir is empty.
	RunDir string
	// Formats selects what WriteAll writes: "html", "svg", "junit", "md",
	// "text". Empty means all of them.
	Formats []string
}

func (o Options) stallFactor() float64 {
	switch {
	case o.StallFactor < 0:
		return 0
	case o.StallFactor == 0:
		return 3
	}
	return o.StallFactor
}

func (o Options) maxTimelines() int {
	if o.MaxTimelines <= 0 {
		return 12
	}
	return o.MaxTimelines
}

func (o Options) maxWaterfall() int {
	if o.MaxWaterfall <= 0 {
		return 24
	}
	return o.MaxWaterfall
}

func (o Options) wants(format string) bool {
	if len(o.Formats) == 0 {
		return true
	}
	for _, f := range o.Formats {
		if f == format {
			return true
		}
	}
	return false
}
